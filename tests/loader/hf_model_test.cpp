#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <cctype>
#include <string>
#include <vector>

#include "core/half.h"
#include "loader/load_model.h"
#include "loader/safetensors.h"

namespace pagoda {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::vector<fs::path> checkpoint_dirs() {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(fs::path(PAGODA_TEST_DATA) / "hf")) {
    if (entry.is_directory() && fs::exists(entry.path() / "config.json")) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// The renaming of loader/weights.h, spelled out independently of the loader's table.
std::string canonical_name(const std::string& hf, bool gemma) {
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  // "model.layers.<digits>.<rest>" (parsed by hand: std::regex trips GCC 12's
  // -Wmaybe-uninitialized under the sanitizer build).
  const std::string prefix = "model.layers.";
  if (hf.rfind(prefix, 0) != 0) return "";
  size_t end = prefix.size();
  while (end < hf.size() && std::isdigit(static_cast<unsigned char>(hf[end]))) ++end;
  if (end == prefix.size() || end >= hf.size() || hf[end] != '.') return "";
  const std::string blk = "blk." + hf.substr(prefix.size(), end - prefix.size()) + ".";
  const std::string rest = hf.substr(end + 1);
  const std::vector<std::pair<std::string, std::string>> common = {
      {"input_layernorm.weight", "attn_norm.weight"},  {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},    {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"}, {"self_attn.q_proj.bias", "attn_q.bias"},
      {"self_attn.k_proj.bias", "attn_k.bias"},        {"self_attn.v_proj.bias", "attn_v.bias"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"}, {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},     {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
  };
  for (const auto& [from, to] : common) {
    if (rest == from) return blk + to;
  }
  if (rest == "post_attention_layernorm.weight") return blk + (gemma ? "post_attention_norm.weight" : "ffn_norm.weight");
  if (gemma && rest == "pre_feedforward_layernorm.weight") return blk + "ffn_norm.weight";
  if (gemma && rest == "post_feedforward_layernorm.weight") return blk + "post_ffw_norm.weight";
  return "";
}

float element(const Tensor& t, int64_t i) {
  const auto* p = static_cast<const uint8_t*>(t.raw());
  if (t.dtype() == DType::F32) {
    float v;
    std::memcpy(&v, p + i * 4, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, p + i * 2, 2);
  return t.dtype() == DType::BF16 ? bf16_to_f32(h) : f16_to_f32(h);
}

TEST(HfModel, LoadsEveryReferenceCheckpoint) {
  const std::vector<fs::path> dirs = checkpoint_dirs();
  ASSERT_GE(dirs.size(), 14u) << "tests/data/hf is missing its checkpoints";
  for (const fs::path& dir : dirs) {
    SCOPED_TRACE(dir.filename().string());
    const json config = read_json(dir / "config.json");
    LoadedModel model;
    ASSERT_NO_THROW(model = load_hf_model(dir.string()));
    const ModelSpec& spec = model.spec;
    EXPECT_EQ(model.hf_dir, dir.string());
    EXPECT_EQ(spec.vocab_size, config.at("vocab_size").get<int>());
    EXPECT_EQ(spec.num_layers, config.at("num_hidden_layers").get<int>());
    const bool gemma = spec.arch == Arch::Gemma3;

    // Read on their own: the files as transformers wrote them (one of them sharded).
    const auto set = SafetensorsSet::open_dir(dir.string());
    EXPECT_EQ(set->num_files(), dir.filename() == "llama2-fp32" ? 3u : 1u);
    const bool bf16 = dir.filename().string().ends_with("-bf16");
    size_t mapped = 0;
    for (const std::string& hf_name : set->names()) {
      SCOPED_TRACE(hf_name);
      const SafetensorsTensorInfo& info = *set->find(hf_name);
      const std::string name = canonical_name(info.name, gemma);
      ASSERT_NE(name, "");
      const Tensor& w = model.weights.get(name);
      ++mapped;
      EXPECT_EQ(w.shape(), info.shape);
      EXPECT_EQ(info.dtype, bf16 ? DType::BF16 : DType::F32);
      const Tensor raw = set->tensor(hf_name);
      if (info.shape.size() == 2) {
        ASSERT_EQ(w.dtype(), info.dtype);  // kept as stored
        ASSERT_EQ(std::memcmp(w.raw(), raw.raw(), raw.nbytes()), 0);
      } else {
        ASSERT_EQ(w.dtype(), DType::F32);
        // HF Gemma applies (1 + w); the canonical norm weight is that factor.
        const bool norm = name.find("norm") != std::string::npos;
        for (int64_t i = 0; i < raw.numel(); ++i) {
          ASSERT_EQ(w.data<float>()[i], element(raw, i) + (gemma && norm ? 1.0f : 0.0f)) << i;
        }
      }
    }
    EXPECT_EQ(mapped, model.weights.all().size());
    EXPECT_EQ(model.weights.find("output.weight") == nullptr, spec.tie_word_embeddings);
    EXPECT_EQ(model.weights.get("token_embd.weight").shape(), (Shape{spec.vocab_size, spec.hidden_size}));
    EXPECT_EQ(model.weights.get("blk.0.attn_q.weight").shape(),
              (Shape{spec.num_heads * spec.head_dim, spec.hidden_size}));
    EXPECT_EQ(model.weights.get("blk.0.attn_k.weight").shape(),
              (Shape{spec.num_kv_heads * spec.head_dim, spec.hidden_size}));
    EXPECT_EQ(model.weights.find("blk.0.attn_q.bias") != nullptr, spec.attention_bias);
    EXPECT_EQ(model.weights.find("blk.0.attn_q_norm.weight") != nullptr, spec.qk_norm);
    EXPECT_EQ(model.weights.find("blk.0.post_ffw_norm.weight") != nullptr, spec.sandwich_norms);

    // The golden logits match the prompt and the vocabulary.
    const json prompt = read_json(dir / "prompt.json");
    const auto ids = prompt.at("ids").get<std::vector<int>>();
    EXPECT_EQ(ids.size(), 80u);
    for (int id : ids) EXPECT_LT(id, spec.vocab_size);
    EXPECT_EQ(fs::file_size(dir / "logits.bin"), ids.size() * static_cast<size_t>(spec.vocab_size) * 4);
  }
}

TEST(HfModel, Gemma3Spec) {
  const LoadedModel model = load_hf_model(std::string(PAGODA_TEST_DATA) + "/hf/gemma3-bf16");
  const ModelSpec& s = model.spec;
  EXPECT_EQ(s.arch, Arch::Gemma3);
  EXPECT_EQ(s.sliding_window, 16);
  EXPECT_EQ(s.layer_sliding, (std::vector<bool>{true, true, false, true}));
  EXPECT_FLOAT_EQ(s.attention_scale(), 1.0f / std::sqrt(48.0f));
  EXPECT_EQ(s.head_dim, 32);
  EXPECT_EQ(s.activation, Activation::GeluTanh);
  EXPECT_FLOAT_EQ(s.rope_theta, 1e6f);
  EXPECT_FLOAT_EQ(s.rope_local_theta, 1e4f);
  EXPECT_TRUE(s.embed_scale && s.sandwich_norms && s.qk_norm && s.tie_word_embeddings);
}

class HfModelBroken : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pagoda_hf_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A copy of a reference checkpoint with config.json edited.
  void copy_with(const std::string& name, const std::function<void(json&)>& edit) {
    const fs::path src = fs::path(PAGODA_TEST_DATA) / "hf" / name;
    for (const auto& entry : fs::directory_iterator(src)) {
      if (entry.path().filename() != "config.json") fs::copy_file(entry.path(), dir_ / entry.path().filename());
    }
    json config = read_json(src / "config.json");
    edit(config);
    std::ofstream(dir_ / "config.json") << config.dump();
  }
  std::string error() {
    try {
      (void)load_hf_model(dir_.string());
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(HfModelBroken, Unchanged) {
  copy_with("llama3-bf16", [](json&) {});
  EXPECT_EQ(error(), "");
}

TEST_F(HfModelBroken, FewerLayersLeaveUnknownTensors) {
  copy_with("llama3-bf16", [](json& c) { c["num_hidden_layers"] = 1; });
  EXPECT_NE(error().find("tensor model.layers.1."), std::string::npos) << error();
}

TEST_F(HfModelBroken, MoreLayersMissTensors) {
  copy_with("qwen2-fp32", [](json& c) { c["num_hidden_layers"] = 3; });
  EXPECT_NE(error().find("missing tensor model.layers.2."), std::string::npos) << error();
}

TEST_F(HfModelBroken, ShardMissingATensor) {
  copy_with("llama2-fp32", [](json&) {});
  EXPECT_EQ(error(), "");
  std::ifstream in(dir_ / "model.safetensors.index.json");
  json index = json::parse(in);
  in.close();
  index["weight_map"]["model.norm.weight"] = "model-00001-of-00003.safetensors";
  std::ofstream(dir_ / "model.safetensors.index.json") << index.dump();
  EXPECT_NE(error().find("index puts tensor model.norm.weight in model-00001-of-00003.safetensors"),
            std::string::npos)
      << error();
}

TEST_F(HfModelBroken, ShapeMismatch) {
  copy_with("mistral-fp32", [](json& c) { c["intermediate_size"] = 96; });
  EXPECT_NE(error().find("has shape [128, 64] but config.json implies [96, 64]"), std::string::npos) << error();
}

TEST_F(HfModelBroken, UntiedWithoutLmHead) {
  copy_with("smollm2-fp32", [](json& c) { c["tie_word_embeddings"] = false; });
  EXPECT_NE(error().find("missing tensor lm_head.weight"), std::string::npos) << error();
}

TEST_F(HfModelBroken, TiedIgnoresStoredLmHead) {
  copy_with("llama-linear-fp32", [](json& c) { c["tie_word_embeddings"] = true; });
  EXPECT_EQ(error(), "");
}

TEST_F(HfModelBroken, ArchWithoutQkNorm) {
  copy_with("qwen3-fp32", [](json& c) { c["architectures"] = {"LlamaForCausalLM"}; });
  EXPECT_NE(error().find("self_attn.k_norm.weight is not part of a llama model"), std::string::npos) << error();
}

// The format does not promise aligned data: one extra header byte shifts every tensor.
TEST_F(HfModelBroken, MisalignedDataIsCopiedAligned) {
  copy_with("llama3-fp32", [](json&) {});
  std::ifstream in(dir_ / "model.safetensors", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  uint64_t len = 0;
  std::memcpy(&len, bytes.data(), 8);
  ++len;
  std::memcpy(bytes.data(), &len, 8);
  bytes.insert(bytes.begin() + static_cast<ptrdiff_t>(7 + len), ' ');
  std::ofstream(dir_ / "model.safetensors", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));

  const LoadedModel model = load_hf_model(dir_.string());
  const LoadedModel reference = load_hf_model(std::string(PAGODA_TEST_DATA) + "/hf/llama3-fp32");
  for (const auto& [name, w] : model.weights.all()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w.raw()) % 4, 0u) << name;
    const Tensor& r = reference.weights.get(name);
    ASSERT_EQ(w.nbytes(), r.nbytes());
    EXPECT_EQ(std::memcmp(w.raw(), r.raw(), r.nbytes()), 0) << name;
  }
}

TEST_F(HfModelBroken, MissingConfig) {
  copy_with("llama3-bf16", [](json&) {});
  fs::remove(dir_ / "config.json");
  EXPECT_NE(error().find("config.json"), std::string::npos);
}

}  // namespace
}  // namespace pagoda
