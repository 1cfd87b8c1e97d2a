// A Hugging Face model directory -> LoadedModel: config.json to ModelSpec, safetensors
// tensors renamed to GGUF's canonical names (loader/weights.h) and checked against the
// shapes the config implies. Matrices stay views into the mmap; vectors become F32 copies.
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/half.h"
#include "loader/hf_config.h"
#include "loader/load_model.h"
#include "loader/safetensors.h"

namespace pagoda {

namespace {

enum class Kind { Matrix, Vector, Norm };

struct Expected {
  std::string hf_name;
  std::string name;  // canonical
  Shape shape;
  Kind kind;
};

std::vector<Expected> expected_tensors(const ModelSpec& spec) {
  const int64_t h = spec.hidden_size;
  const int64_t q = static_cast<int64_t>(spec.num_heads) * spec.head_dim;
  const int64_t kv = static_cast<int64_t>(spec.num_kv_heads) * spec.head_dim;
  const int64_t ffn = spec.intermediate_size;
  const bool gemma = spec.arch == Arch::Gemma3;
  std::vector<Expected> out = {
      {"model.embed_tokens.weight", "token_embd.weight", {spec.vocab_size, h}, Kind::Matrix},
      {"model.norm.weight", "output_norm.weight", {h}, Kind::Norm},
  };
  if (!spec.tie_word_embeddings) out.push_back({"lm_head.weight", "output.weight", {spec.vocab_size, h}, Kind::Matrix});
  for (int i = 0; i < spec.num_layers; ++i) {
    const std::string hf = "model.layers." + std::to_string(i) + ".";
    const std::string blk = "blk." + std::to_string(i) + ".";
    auto add = [&](const char* hf_suffix, const char* suffix, Shape shape, Kind kind) {
      out.push_back({hf + hf_suffix, blk + suffix, std::move(shape), kind});
    };
    add("input_layernorm.weight", "attn_norm.weight", {h}, Kind::Norm);
    add("self_attn.q_proj.weight", "attn_q.weight", {q, h}, Kind::Matrix);
    add("self_attn.k_proj.weight", "attn_k.weight", {kv, h}, Kind::Matrix);
    add("self_attn.v_proj.weight", "attn_v.weight", {kv, h}, Kind::Matrix);
    add("self_attn.o_proj.weight", "attn_output.weight", {h, q}, Kind::Matrix);
    if (spec.attention_bias) {
      add("self_attn.q_proj.bias", "attn_q.bias", {q}, Kind::Vector);
      add("self_attn.k_proj.bias", "attn_k.bias", {kv}, Kind::Vector);
      add("self_attn.v_proj.bias", "attn_v.bias", {kv}, Kind::Vector);
    }
    if (spec.qk_norm) {
      add("self_attn.q_norm.weight", "attn_q_norm.weight", {spec.head_dim}, Kind::Norm);
      add("self_attn.k_norm.weight", "attn_k_norm.weight", {spec.head_dim}, Kind::Norm);
    }
    if (gemma) {
      // Gemma's sandwich: post_attention_layernorm follows attention, pre_feedforward_layernorm
      // is the MLP's input norm.
      add("post_attention_layernorm.weight", "post_attention_norm.weight", {h}, Kind::Norm);
      add("pre_feedforward_layernorm.weight", "ffn_norm.weight", {h}, Kind::Norm);
      add("post_feedforward_layernorm.weight", "post_ffw_norm.weight", {h}, Kind::Norm);
    } else {
      add("post_attention_layernorm.weight", "ffn_norm.weight", {h}, Kind::Norm);
    }
    add("mlp.gate_proj.weight", "ffn_gate.weight", {ffn, h}, Kind::Matrix);
    add("mlp.up_proj.weight", "ffn_up.weight", {ffn, h}, Kind::Matrix);
    add("mlp.down_proj.weight", "ffn_down.weight", {h, ffn}, Kind::Matrix);
  }
  return out;
}

float element_f32(const Tensor& t, int64_t i) {
  const auto* bytes = static_cast<const uint8_t*>(t.raw());
  switch (t.dtype()) {
    case DType::F32: {
      float v;
      std::memcpy(&v, bytes + i * 4, 4);
      return v;
    }
    case DType::F16:
    case DType::BF16: {
      uint16_t v;
      std::memcpy(&v, bytes + i * 2, 2);
      return t.dtype() == DType::F16 ? f16_to_f32(v) : bf16_to_f32(v);
    }
    default: fail("hf: unexpected dtype ", dtype_name(t.dtype()));
  }
}

Tensor convert(const Tensor& src, const Expected& e, bool gemma) {
  if (e.kind == Kind::Matrix) {
    const size_t align = dtype_info(src.dtype()).block_bytes;
    if (reinterpret_cast<uintptr_t>(src.raw()) % align == 0) return src;
    // The format does not promise alignment; kernels need it, so copy the odd one.
    Tensor copy = Tensor::host(src.dtype(), src.shape());
    std::memcpy(copy.raw(), src.raw(), src.nbytes());
    return copy;
  }
  Tensor out = Tensor::host(DType::F32, src.shape());
  // HF Gemma computes x * (1 + w); the canonical weight is the factor itself.
  const float offset = gemma && e.kind == Kind::Norm ? 1.0f : 0.0f;
  for (int64_t i = 0; i < src.numel(); ++i) out.data<float>()[i] = element_f32(src, i) + offset;
  return out;
}

}  // namespace

LoadedModel load_hf_model(const std::string& dir) {
  LoadedModel model;
  model.spec = load_hf_config(dir);
  model.hf_dir = dir;
  std::shared_ptr<SafetensorsSet> set = SafetensorsSet::open_dir(dir);
  const ModelSpec& spec = model.spec;
  const bool gemma = spec.arch == Arch::Gemma3;

  const std::vector<Expected> expected = expected_tensors(spec);
  std::unordered_map<std::string, const Expected*> by_hf_name;
  for (const Expected& e : expected) by_hf_name.emplace(e.hf_name, &e);

  for (const std::string& name : set->names()) {
    if (!by_hf_name.contains(name)) {
      // Tied checkpoints sometimes store lm_head anyway; old ones store rope tables.
      if (name == "lm_head.weight" && spec.tie_word_embeddings) continue;
      if (name.ends_with(".rotary_emb.inv_freq")) continue;
      fail(dir, ": tensor ", name, " is not part of a ", spec.arch_name, " model with ", spec.num_layers,
           " layers as config.json describes it");
    }
  }
  for (const Expected& e : expected) {
    const SafetensorsTensorInfo* info = set->find(e.hf_name);
    if (info == nullptr) fail(dir, ": missing tensor ", e.hf_name, " (", e.name, ")");
    if (info->shape != e.shape) {
      fail(dir, ": tensor ", e.hf_name, " has shape ", shape_string(info->shape), " but config.json implies ",
           shape_string(e.shape));
    }
    model.weights.add(e.name, convert(set->tensor(e.hf_name), e, gemma));
  }
  for (const MappedFile* file : set->mappings()) model.weights.add_mapping(file);
  model.weights.keep_alive(std::move(set));
  return model;
}

}  // namespace pagoda
