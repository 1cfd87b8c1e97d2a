// ModelSpec and weights from a parsed GGUF file, for the architectures llama.cpp names
// llama (Llama 2/3, SmolLM2, Mistral), qwen2, qwen3 and gemma3.
//
// Weights stay in the mmap as views, except 1-D tensors (norm weights, biases, rope
// factors), which are converted to owned F32 because every kernel reads them as F32.
//
// Llama 3.1-style rope scaling: llama.cpp's converter does not store the HF rope_scaling
// parameters, it stores the per-frequency divisors it computed from them as the tensor
// rope_freqs.weight [head_dim / 2]. When that tensor is present the spec says Llama3 with
// factor = the largest divisor (the HF `factor`) and HF's defaults for the rest; model
// code should prefer the exact divisors in rope_freqs.weight (as llama.cpp does).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/half.h"
#include "loader/gguf.h"
#include "loader/load_model.h"

namespace pagoda {

namespace {

// Sanity bounds on hyperparameters, far above any real model, so that a hostile file
// cannot make us loop or allocate without limit before the tensor checks catch it.
constexpr int64_t kMaxDim = int64_t{1} << 20;
constexpr int64_t kMaxLayers = 4096;

struct ArchTraits {
  Arch arch;
  const char* name;
  bool rope_neox;  // false for llama: the HF->GGUF converter permuted the q/k rows
  bool qk_norm;
};

constexpr ArchTraits kArchs[] = {
    {Arch::Llama, "llama", false, false},
    {Arch::Qwen2, "qwen2", true, false},
    {Arch::Qwen3, "qwen3", true, true},
    {Arch::Gemma3, "gemma3", true, true},
};

const ArchTraits& find_arch(const std::string& name) {
  for (const ArchTraits& a : kArchs) {
    if (name == a.name) return a;
  }
  std::string supported;
  for (const ArchTraits& a : kArchs)
    supported += std::string(supported.empty() ? "" : ", ") + a.name;
  fail("unsupported architecture '", name, "' (supported: ", supported, ")");
}

int get_dim(const GgufFile& file, const std::string& key, int64_t max = kMaxDim) {
  const int64_t v = file.get_int(key);
  if (v < 1 || v > max) fail("metadata key ", key, ": value ", v, " is outside [1, ", max, "]");
  return static_cast<int>(v);
}

int get_dim_or(const GgufFile& file, const std::string& key, int fallback) {
  return file.has(key) ? get_dim(file, key) : fallback;
}

float get_positive_float(const GgufFile& file, const std::string& key) {
  const double v = file.get_float(key);
  if (!(v > 0) || !std::isfinite(v)) fail("metadata key ", key, ": value ", v, " must be positive");
  return static_cast<float>(v);
}

float get_positive_float_or(const GgufFile& file, const std::string& key, float fallback) {
  return file.has(key) ? get_positive_float(file, key) : fallback;
}

// A softcap: 0 (or absent) means none.
float get_softcap(const GgufFile& file, const std::string& key) {
  const double v = file.get_float_or(key, 0);
  if (!(v >= 0) || !std::isfinite(v)) fail("metadata key ", key, ": value ", v, " must be >= 0");
  return static_cast<float>(v);
}

int get_token_id(const GgufFile& file, const std::string& key, int vocab_size) {
  const int64_t id = file.get_int(key);
  if (id < 0 || id >= vocab_size) {
    fail("metadata key ", key, ": token id ", id, " is outside the vocabulary of ", vocab_size);
  }
  return static_cast<int>(id);
}

// A 1-D tensor from the file as an owned F32 tensor.
Tensor to_f32(const GgufFile& file, const GgufTensorInfo& info) {
  const Tensor src = file.tensor(info);
  Tensor dst = Tensor::host(DType::F32, info.shape);
  const auto n = static_cast<size_t>(src.numel());
  float* out = dst.data<float>();
  switch (info.dtype) {
    case DType::F32: std::memcpy(out, src.raw(), n * sizeof(float)); break;
    case DType::F16:
    case DType::BF16: {
      // The mapped bytes need not be 2-byte aligned when parse() got a caller's buffer.
      const auto* bytes = static_cast<const uint8_t*>(src.raw());
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, bytes + 2 * i, 2);
        out[i] = info.dtype == DType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
      break;
    }
    default:
      fail("tensor ", info.name, ": 1-D tensor of type ", dtype_name(info.dtype),
           " (expected F32, F16 or BF16)");
  }
  return dst;
}

WeightMap load_weights(std::shared_ptr<GgufFile> file) {
  WeightMap weights;
  for (const GgufTensorInfo& info : file->tensors()) {
    weights.add(info.name, info.shape.size() == 1 ? to_f32(*file, info) : file->tensor(info));
  }
  if (file->mapping() != nullptr) weights.add_mapping(file->mapping());
  weights.keep_alive(std::move(file));
  return weights;
}

// Checks that the tensors a forward pass of `spec` reads are present with the shapes it
// expects (see loader/weights.h).
class ShapeChecker {
 public:
  explicit ShapeChecker(const WeightMap& weights) : weights_(weights) {}

  void require(const std::string& name, const Shape& expected) const {
    const Tensor* t = weights_.find(name);
    if (t == nullptr) fail("model file has no tensor ", name);
    check(name, *t, expected);
  }

  void optional(const std::string& name, const Shape& expected) const {
    if (const Tensor* t = weights_.find(name)) check(name, *t, expected);
  }

 private:
  static void check(const std::string& name, const Tensor& t, const Shape& expected) {
    if (t.shape() != expected) {
      fail("tensor ", name, " has shape ", shape_string(t.shape()), ", expected ",
           shape_string(expected));
    }
  }

  const WeightMap& weights_;
};

void check_shapes(const ModelSpec& s, const WeightMap& weights) {
  const ShapeChecker c(weights);
  const int64_t hidden = s.hidden_size;
  const int64_t q_rows = int64_t{s.num_heads} * s.head_dim;
  const int64_t kv_rows = int64_t{s.num_kv_heads} * s.head_dim;
  const int64_t inter = s.intermediate_size;
  c.require("token_embd.weight", {s.vocab_size, hidden});
  c.require("output_norm.weight", {hidden});
  c.optional("output.weight", {s.vocab_size, hidden});
  c.optional("rope_freqs.weight", {s.head_dim / 2});
  for (int i = 0; i < s.num_layers; ++i) {
    const std::string blk = "blk." + std::to_string(i) + ".";
    c.require(blk + "attn_norm.weight", {hidden});
    c.require(blk + "attn_q.weight", {q_rows, hidden});
    c.require(blk + "attn_k.weight", {kv_rows, hidden});
    c.require(blk + "attn_v.weight", {kv_rows, hidden});
    c.require(blk + "attn_output.weight", {hidden, q_rows});
    c.require(blk + "ffn_norm.weight", {hidden});
    c.require(blk + "ffn_gate.weight", {inter, hidden});
    c.require(blk + "ffn_up.weight", {inter, hidden});
    c.require(blk + "ffn_down.weight", {hidden, inter});
    if (s.attention_bias) {
      c.require(blk + "attn_q.bias", {q_rows});
      c.require(blk + "attn_k.bias", {kv_rows});
      c.require(blk + "attn_v.bias", {kv_rows});
    }
    if (s.qk_norm) {
      c.require(blk + "attn_q_norm.weight", {s.head_dim});
      c.require(blk + "attn_k_norm.weight", {s.head_dim});
    }
    if (s.sandwich_norms) {
      c.require(blk + "post_attention_norm.weight", {hidden});
      c.require(blk + "post_ffw_norm.weight", {hidden});
    }
  }
}

void read_rope_scaling(const GgufFile& file, const std::string& p, const WeightMap& weights,
                       ModelSpec& s) {
  const std::string type = file.get_string_or(p + "rope.scaling.type", "none");
  if (type == "linear") {
    s.rope_scaling.type = RopeScalingType::Linear;
    s.rope_scaling.factor = get_positive_float(file, p + "rope.scaling.factor");
  } else if (type != "none") {
    fail("metadata key ", p, "rope.scaling.type: unsupported rope scaling '", type,
         "' (supported: none, linear, and llama3 via rope_freqs.weight)");
  }
  if (const Tensor* freqs = weights.find("rope_freqs.weight")) {
    if (s.rope_scaling.type != RopeScalingType::None) {
      fail("model file has both ", p, "rope.scaling.type and rope_freqs.weight");
    }
    const float* f = freqs->data<float>();
    const float factor = *std::max_element(f, f + freqs->numel());
    if (!(factor >= 1) || !std::isfinite(factor)) {
      fail("tensor rope_freqs.weight: largest factor ", factor, " is not a finite value >= 1");
    }
    s.rope_scaling.type = RopeScalingType::Llama3;
    s.rope_scaling.factor = factor;
    s.rope_scaling.original_max_position_embeddings =
        get_dim_or(file, p + "rope.scaling.original_context_length",
                   s.rope_scaling.original_max_position_embeddings);
  }
}

void read_gemma3(const GgufFile& file, const std::string& p, ModelSpec& s) {
  s.activation = Activation::GeluTanh;
  s.embed_scale = true;
  s.sandwich_norms = true;
  s.sliding_window = get_dim(file, p + "attention.sliding_window", std::numeric_limits<int>::max());
  // llama.cpp's gemma3 pattern: every sixth layer is global, the others slide.
  s.layer_sliding.resize(static_cast<size_t>(s.num_layers));
  for (int i = 0; i < s.num_layers; ++i) s.layer_sliding[static_cast<size_t>(i)] = (i + 1) % 6 != 0;
  s.rope_local_theta = 10000.0f;
  // Gemma 3 scales queries by 1/sqrt(head_dim), except the 27B model (62 layers), whose
  // query_pre_attn_scalar is hidden / heads (HF config; llama.cpp special-cases it too).
  s.query_pre_attn_scalar = s.num_layers == 62 ? static_cast<float>(s.hidden_size / s.num_heads)
                                               : static_cast<float>(s.head_dim);
  s.final_logit_softcap = get_softcap(file, p + "final_logit_softcapping");
  s.attn_logit_softcap = get_softcap(file, p + "attn_logit_softcapping");
}

void read_special_tokens(const GgufFile& file, ModelSpec& s) {
  if (file.has("tokenizer.ggml.bos_token_id")) {
    s.bos_token_id = get_token_id(file, "tokenizer.ggml.bos_token_id", s.vocab_size);
  }
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                          "tokenizer.ggml.eom_token_id"}) {
    if (!file.has(key)) continue;
    const int id = get_token_id(file, key, s.vocab_size);
    if (std::find(s.eos_token_ids.begin(), s.eos_token_ids.end(), id) == s.eos_token_ids.end()) {
      s.eos_token_ids.push_back(id);
    }
  }
}

ModelSpec read_spec(const GgufFile& file, const WeightMap& weights) {
  ModelSpec s;
  s.arch_name = file.get_string("general.architecture");
  const ArchTraits& traits = find_arch(s.arch_name);
  s.arch = traits.arch;
  s.rope_neox = traits.rope_neox;
  s.qk_norm = traits.qk_norm;
  const std::string p = s.arch_name + ".";

  s.hidden_size = get_dim(file, p + "embedding_length");
  s.intermediate_size = get_dim(file, p + "feed_forward_length");
  s.num_layers = get_dim(file, p + "block_count", kMaxLayers);
  s.num_heads = get_dim(file, p + "attention.head_count");
  s.num_kv_heads = get_dim_or(file, p + "attention.head_count_kv", s.num_heads);
  if (s.num_heads % s.num_kv_heads != 0) {
    fail("attention.head_count ", s.num_heads, " is not a multiple of head_count_kv ",
         s.num_kv_heads);
  }
  if (file.has(p + "attention.key_length")) {
    s.head_dim = get_dim(file, p + "attention.key_length");
  } else if (s.hidden_size % s.num_heads == 0) {
    s.head_dim = s.hidden_size / s.num_heads;
  } else {
    fail("embedding_length ", s.hidden_size, " is not a multiple of attention.head_count ",
         s.num_heads, " and attention.key_length is absent");
  }
  if (get_dim_or(file, p + "attention.value_length", s.head_dim) != s.head_dim) {
    fail("metadata key ", p, "attention.value_length differs from key_length (unsupported)");
  }
  // Partial rotary embeddings (rope on fewer dims than the head) are not supported.
  if (get_dim_or(file, p + "rope.dimension_count", s.head_dim) != s.head_dim) {
    fail("metadata key ", p, "rope.dimension_count differs from the head dimension ", s.head_dim,
         " (partial rotary embeddings are unsupported)");
  }
  s.max_position_embeddings = get_dim(file, p + "context_length", std::numeric_limits<int>::max());
  s.rms_norm_eps = get_positive_float(file, p + "attention.layer_norm_rms_epsilon");
  s.rope_theta = get_positive_float_or(file, p + "rope.freq_base", s.rope_theta);

  const Tensor* embd = weights.find("token_embd.weight");
  if (embd == nullptr) fail("model file has no tensor token_embd.weight");
  if (embd->ndim() != 2 || embd->dim(0) > std::numeric_limits<int>::max()) {
    fail("tensor token_embd.weight has shape ", shape_string(embd->shape()), ", expected [vocab, ",
         s.hidden_size, "]");
  }
  s.vocab_size = static_cast<int>(embd->dim(0));
  s.tie_word_embeddings = weights.find("output.weight") == nullptr;
  s.attention_bias = s.arch == Arch::Qwen2 && weights.find("blk.0.attn_q.bias") != nullptr;
  if (s.arch == Arch::Gemma3) read_gemma3(file, p, s);

  check_shapes(s, weights);
  read_rope_scaling(file, p, weights, s);
  read_special_tokens(file, s);
  return s;
}

}  // namespace

LoadedModel load_gguf_model(std::shared_ptr<GgufFile> file) {
  PAGODA_CHECK(file != nullptr);
  // The architecture first: a file of another kind should be told so, not that some
  // tensor of it is unexpected.
  (void)find_arch(file->get_string("general.architecture"));
  LoadedModel model;
  model.weights = load_weights(file);
  model.spec = read_spec(*file, model.weights);
  model.gguf = std::move(file);
  return model;
}

}  // namespace pagoda
