// load_gguf_model: ModelSpec from <arch>.* metadata and weights from tensors, on tiny
// files written by the test writer, and on the two cached real models (whose expected
// values come from their Hugging Face config.json files).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/half.h"
#include "loader/gguf.h"
#include "loader/gguf_writer.h"
#include "loader/load_model.h"

namespace pagoda {
namespace {

using test::GgufWriter;
using test::TensorSpec;

struct TinyModel {
  std::string arch = "llama";
  uint64_t hidden = 16, heads = 4, kv_heads = 2, head_dim = 4, inter = 32, layers = 2, vocab = 10;
  bool output = false;  // write output.weight (untied)
  bool bias = false;    // qwen2 q/k/v biases
  bool qk_norm = false;
  bool sandwich = false;
  uint64_t claimed_layers = ~uint64_t{0};  // block_count written, when not `layers`
  bool zero_heads = false;                 // write head_count 0
};

// A model file with every tensor loader/weights.h lists for the options chosen.
GgufWriter tiny_writer(const TinyModel& m) {
  GgufWriter w;
  const std::string p = m.arch + ".";
  w.add_string("general.architecture", m.arch);
  w.add_u32(p + "embedding_length", static_cast<uint32_t>(m.hidden));
  w.add_u32(p + "feed_forward_length", static_cast<uint32_t>(m.inter));
  const uint64_t block_count = m.claimed_layers == ~uint64_t{0} ? m.layers : m.claimed_layers;
  w.add_u32(p + "block_count", static_cast<uint32_t>(block_count));
  w.add_u32(p + "attention.head_count", m.zero_heads ? 0u : static_cast<uint32_t>(m.heads));
  w.add_u32(p + "attention.head_count_kv", static_cast<uint32_t>(m.kv_heads));
  w.add_u32(p + "context_length", 128);
  w.add_f32(p + "attention.layer_norm_rms_epsilon", 1e-6f);
  w.add_f32(p + "rope.freq_base", 500000.0f);
  w.add_u32("tokenizer.ggml.bos_token_id", 1);
  w.add_u32("tokenizer.ggml.eos_token_id", 2);
  const uint64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  w.add_f32_tensor("token_embd.weight", {m.hidden, m.vocab});
  w.add_f32_tensor("output_norm.weight", {m.hidden});
  if (m.output) w.add_f32_tensor("output.weight", {m.hidden, m.vocab});
  for (uint64_t i = 0; i < m.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.add_f32_tensor(b + "attn_norm.weight", {m.hidden});
    w.add_f32_tensor(b + "attn_q.weight", {m.hidden, q});
    w.add_f32_tensor(b + "attn_k.weight", {m.hidden, kv});
    w.add_f32_tensor(b + "attn_v.weight", {m.hidden, kv});
    w.add_f32_tensor(b + "attn_output.weight", {q, m.hidden});
    w.add_f32_tensor(b + "ffn_norm.weight", {m.hidden});
    w.add_f32_tensor(b + "ffn_gate.weight", {m.hidden, m.inter});
    w.add_f32_tensor(b + "ffn_up.weight", {m.hidden, m.inter});
    w.add_f32_tensor(b + "ffn_down.weight", {m.inter, m.hidden});
    if (m.bias) {
      w.add_f32_tensor(b + "attn_q.bias", {q});
      w.add_f32_tensor(b + "attn_k.bias", {kv});
      w.add_f32_tensor(b + "attn_v.bias", {kv});
    }
    if (m.qk_norm) {
      w.add_f32_tensor(b + "attn_q_norm.weight", {m.head_dim});
      w.add_f32_tensor(b + "attn_k_norm.weight", {m.head_dim});
    }
    if (m.sandwich) {
      w.add_f32_tensor(b + "post_attention_norm.weight", {m.hidden});
      w.add_f32_tensor(b + "post_ffw_norm.weight", {m.hidden});
    }
  }
  return w;
}

LoadedModel load(const std::vector<uint8_t>& bytes) {
  std::shared_ptr<GgufFile> f =
      GgufFile::parse(std::span<const uint8_t>(bytes.data(), bytes.size()));
  return load_gguf_model(std::move(f));
}

void expect_load_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  try {
    (void)load(bytes);
    ADD_FAILURE() << "loaded, expected an error containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
  }
}

TEST(GgufModel, TinyLlamaSpecAndWeights) {
  const std::vector<uint8_t> bytes = tiny_writer({}).bytes();
  const LoadedModel m = load(bytes);
  const ModelSpec& s = m.spec;
  EXPECT_EQ(s.arch, Arch::Llama);
  EXPECT_EQ(s.arch_name, "llama");
  EXPECT_EQ(s.vocab_size, 10);
  EXPECT_EQ(s.hidden_size, 16);
  EXPECT_EQ(s.intermediate_size, 32);
  EXPECT_EQ(s.num_layers, 2);
  EXPECT_EQ(s.num_heads, 4);
  EXPECT_EQ(s.num_kv_heads, 2);
  EXPECT_EQ(s.head_dim, 4);  // hidden / heads: no key_length
  EXPECT_EQ(s.max_position_embeddings, 128);
  EXPECT_FLOAT_EQ(s.rms_norm_eps, 1e-6f);
  EXPECT_FLOAT_EQ(s.rope_theta, 500000.0f);
  EXPECT_FALSE(s.rope_neox);
  EXPECT_TRUE(s.tie_word_embeddings);
  EXPECT_FALSE(s.attention_bias);
  EXPECT_FALSE(s.qk_norm);
  EXPECT_EQ(s.rope_scaling.type, RopeScalingType::None);
  EXPECT_EQ(s.activation, Activation::Silu);
  EXPECT_EQ(s.bos_token_id, 1);
  EXPECT_EQ(s.eos_token_ids, std::vector<int>{2});

  ASSERT_NE(m.gguf, nullptr);
  EXPECT_EQ(m.weights.all().size(), m.gguf->tensors().size());
  // 2-D weights are views into the file's bytes; 1-D ones are owned F32 copies.
  const Tensor& q = m.weights.get("blk.1.attn_q.weight");
  EXPECT_EQ(q.shape(), (Shape{16, 16}));
  EXPECT_EQ(q.raw(), bytes.data() + m.gguf->find_tensor("blk.1.attn_q.weight")->offset);
  const Tensor& norm = m.weights.get("blk.0.attn_norm.weight");
  EXPECT_EQ(norm.dtype(), DType::F32);
  EXPECT_NE(norm.raw(), bytes.data() + m.gguf->find_tensor("blk.0.attn_norm.weight")->offset);
  EXPECT_EQ(norm.data<float>()[15], 15.0f);
}

TEST(GgufModel, HalfPrecisionNormsBecomeF32) {
  GgufWriter w = tiny_writer({.layers = 1});
  const std::vector<float> values = {1.0f, -2.5f, 0.333f, 65504.0f};
  TensorSpec f16{"extra_f16.weight", {4}, test::kGgmlF16, {}, std::nullopt};
  TensorSpec bf16{"extra_bf16.weight", {4}, test::kGgmlBF16, {}, std::nullopt};
  for (float v : values) {
    for (auto [spec, h] : {std::pair{&f16, f32_to_f16(v)}, std::pair{&bf16, f32_to_bf16(v)}}) {
      spec->data.push_back(static_cast<uint8_t>(h & 0xff));
      spec->data.push_back(static_cast<uint8_t>(h >> 8));
    }
  }
  w.add_tensor(f16);
  w.add_tensor(bf16);
  const LoadedModel m = load(w.bytes());
  const Tensor& a = m.weights.get("extra_f16.weight");
  const Tensor& b = m.weights.get("extra_bf16.weight");
  ASSERT_EQ(a.dtype(), DType::F32);
  ASSERT_EQ(b.dtype(), DType::F32);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(a.data<float>()[i], f16_to_f32(f32_to_f16(values[i])));
    EXPECT_EQ(b.data<float>()[i], bf16_to_f32(f32_to_bf16(values[i])));
  }
  GgufWriter q = tiny_writer({.layers = 1});
  q.add_tensor({"bad_norm.weight", {32}, test::kGgmlQ8_0, std::vector<uint8_t>(34), std::nullopt});
  expect_load_error(q.bytes(), "tensor bad_norm.weight: 1-D tensor of type Q8_0");
}

TEST(GgufModel, Qwen2BiasQwen3QkNorm) {
  const LoadedModel q2 = load(tiny_writer({.arch = "qwen2", .output = true, .bias = true}).bytes());
  EXPECT_EQ(q2.spec.arch, Arch::Qwen2);
  EXPECT_TRUE(q2.spec.rope_neox);
  EXPECT_TRUE(q2.spec.attention_bias);
  EXPECT_FALSE(q2.spec.tie_word_embeddings);
  EXPECT_FALSE(load(tiny_writer({.arch = "qwen2"}).bytes()).spec.attention_bias);

  const LoadedModel q3 = load(tiny_writer({.arch = "qwen3", .qk_norm = true}).bytes());
  EXPECT_EQ(q3.spec.arch, Arch::Qwen3);
  EXPECT_TRUE(q3.spec.qk_norm);
  EXPECT_TRUE(q3.spec.rope_neox);
  expect_load_error(tiny_writer({.arch = "qwen3"}).bytes(), "no tensor blk.0.attn_q_norm.weight");
}

TEST(GgufModel, Gemma3) {
  // head_dim 4 differs from hidden / heads = 8, so key_length must be what is used.
  TinyModel t{.arch = "gemma3", .heads = 2, .kv_heads = 1, .head_dim = 4, .layers = 7,
              .qk_norm = true, .sandwich = true};
  GgufWriter w = tiny_writer(t);
  w.add_u32("gemma3.attention.key_length", 4);
  w.add_u32("gemma3.attention.value_length", 4);
  w.add_u32("gemma3.attention.sliding_window", 512);
  w.add_f32("gemma3.final_logit_softcapping", 30.0f);
  w.add_u32("tokenizer.ggml.eot_token_id", 3);
  const LoadedModel m = load(w.bytes());
  const ModelSpec& s = m.spec;
  EXPECT_EQ(s.arch, Arch::Gemma3);
  EXPECT_EQ(s.head_dim, 4);
  EXPECT_EQ(s.activation, Activation::GeluTanh);
  EXPECT_TRUE(s.embed_scale && s.sandwich_norms && s.qk_norm && s.rope_neox);
  EXPECT_EQ(s.sliding_window, 512);
  // Layers 0-4 slide, layer 5 is global, layer 6 slides again.
  EXPECT_EQ(s.layer_sliding, (std::vector<bool>{true, true, true, true, true, false, true}));
  EXPECT_FLOAT_EQ(s.rope_local_theta, 10000.0f);
  EXPECT_FLOAT_EQ(s.query_pre_attn_scalar, 4.0f);  // head_dim
  EXPECT_FLOAT_EQ(s.final_logit_softcap, 30.0f);
  EXPECT_FLOAT_EQ(s.attn_logit_softcap, 0.0f);
  EXPECT_EQ(s.eos_token_ids, (std::vector<int>{2, 3}));

  GgufWriter no_window = tiny_writer(t);
  no_window.add_u32("gemma3.attention.key_length", 4);
  expect_load_error(no_window.bytes(), "gemma3.attention.sliding_window is missing");
}

TEST(GgufModel, HeadDimFromKeyLength) {
  GgufWriter w = tiny_writer({.heads = 2, .kv_heads = 1, .head_dim = 16});
  w.add_u32("llama.attention.key_length", 16);
  EXPECT_EQ(load(w.bytes()).spec.head_dim, 16);
  GgufWriter v = tiny_writer({.heads = 2, .kv_heads = 1, .head_dim = 16});
  v.add_u32("llama.attention.key_length", 16);
  v.add_u32("llama.attention.value_length", 8);
  expect_load_error(v.bytes(), "value_length differs");
  GgufWriter rope = tiny_writer({});
  rope.add_u32("llama.rope.dimension_count", 2);  // head_dim is 4
  expect_load_error(rope.bytes(), "llama.rope.dimension_count differs from the head dimension 4");
}

TEST(GgufModel, RopeScaling) {
  GgufWriter lin = tiny_writer({});
  lin.add_string("llama.rope.scaling.type", "linear");
  lin.add_f32("llama.rope.scaling.factor", 4.0f);
  const ModelSpec s = load(lin.bytes()).spec;
  EXPECT_EQ(s.rope_scaling.type, RopeScalingType::Linear);
  EXPECT_FLOAT_EQ(s.rope_scaling.factor, 4.0f);

  GgufWriter yarn = tiny_writer({});
  yarn.add_string("llama.rope.scaling.type", "yarn");
  expect_load_error(yarn.bytes(), "unsupported rope scaling 'yarn'");

  // llama3: llama.cpp's converter stores per-frequency divisors as rope_freqs.weight.
  GgufWriter l3 = tiny_writer({});
  TensorSpec freqs{"rope_freqs.weight", {2}, test::kGgmlF32, {}, std::nullopt};
  for (float f : {1.0f, 8.0f}) {
    const auto* p = reinterpret_cast<const uint8_t*>(&f);
    freqs.data.insert(freqs.data.end(), p, p + 4);
  }
  l3.add_tensor(freqs);
  const LoadedModel m = load(l3.bytes());
  EXPECT_EQ(m.spec.rope_scaling.type, RopeScalingType::Llama3);
  EXPECT_FLOAT_EQ(m.spec.rope_scaling.factor, 8.0f);
  EXPECT_EQ(m.weights.get("rope_freqs.weight").dtype(), DType::F32);
}

TEST(GgufModel, RefusesBadModels) {
  GgufWriter arch = tiny_writer({.arch = "mamba"});
  expect_load_error(arch.bytes(),
                    "unsupported architecture 'mamba' (supported: llama, qwen2, qwen3, gemma3)");

  GgufWriter shape = tiny_writer({});
  shape.add_f32_tensor("output.weight", {16, 11});  // vocab 11, embedding says 10
  expect_load_error(shape.bytes(), "tensor output.weight has shape [11, 16], expected [10, 16]");

  GgufWriter heads = tiny_writer({.heads = 4, .kv_heads = 3});
  expect_load_error(heads.bytes(), "not a multiple of head_count_kv 3");

  GgufWriter zero = tiny_writer({.zero_heads = true});
  expect_load_error(zero.bytes(), "llama.attention.head_count: value 0 is outside");

  GgufWriter bad_eos = tiny_writer({});
  bad_eos.add_u32("tokenizer.ggml.eot_token_id", 10);  // == vocab size
  expect_load_error(bad_eos.bytes(), "tokenizer.ggml.eot_token_id: token id 10 is outside");

  GgufWriter eps = tiny_writer({});
  eps.add_f32("llama.rope.scaling.factor", -1);
  eps.add_string("llama.rope.scaling.type", "linear");
  expect_load_error(eps.bytes(), "llama.rope.scaling.factor: value -1 must be positive");
}

TEST(GgufModel, RefusesMissingLayerTensor) {
  const std::vector<uint8_t> bytes = tiny_writer({.layers = 2, .claimed_layers = 3}).bytes();
  expect_load_error(bytes, "model file has no tensor blk.2.attn_norm.weight");
  GgufWriter huge = tiny_writer({.claimed_layers = 1u << 30});
  expect_load_error(huge.bytes(), "llama.block_count: value 1073741824 is outside [1, 4096]");
}

// The fuzz seeds, written by the gguf PyPI package's GGUFWriter
// (tools/make_gguf_fuzz_seeds.py; its constants are the expected values here).
std::string seed_path(const char* name) {
  // PAGODA_TEST_DATA is <root>/tests/data (which need not exist, so no "..").
  const std::filesystem::path root =
      std::filesystem::path(PAGODA_TEST_DATA).parent_path().parent_path();
  return (root / "fuzz" / "corpus" / "gguf_fuzz" / name).string();
}

TEST(GgufModelSeeds, FilesFromAnotherWriterLoad) {
  const LoadedModel llama = load_gguf_model(GgufFile::open(seed_path("tiny_llama.gguf")));
  EXPECT_EQ(llama.spec.vocab_size, 8);
  EXPECT_EQ(llama.spec.hidden_size, 32);
  EXPECT_EQ(llama.spec.head_dim, 16);
  EXPECT_EQ(llama.spec.num_kv_heads, 1);
  EXPECT_TRUE(llama.spec.tie_word_embeddings);
  EXPECT_EQ(llama.weights.get("token_embd.weight").dtype(), DType::Q8_0);
  EXPECT_EQ(llama.weights.get("blk.0.attn_q.weight").dtype(), DType::F16);
  EXPECT_EQ(llama.weights.get("blk.0.attn_q.weight").shape(), (Shape{32, 32}));
  const Tensor& ffn_norm = llama.weights.get("blk.0.ffn_norm.weight");  // F16 ones in the file
  ASSERT_EQ(ffn_norm.dtype(), DType::F32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(ffn_norm.data<float>()[i], 1.0f);

  const LoadedModel qwen2 = load_gguf_model(GgufFile::open(seed_path("tiny_qwen2.gguf")));
  EXPECT_TRUE(qwen2.spec.attention_bias);
  EXPECT_FALSE(qwen2.spec.tie_word_embeddings);

  const LoadedModel gemma = load_gguf_model(GgufFile::open(seed_path("tiny_gemma3.gguf")));
  EXPECT_EQ(gemma.spec.sliding_window, 16);
  EXPECT_EQ(gemma.spec.layer_sliding, (std::vector<bool>{true, true}));

  const auto types = GgufFile::open(seed_path("metadata_types.gguf"));
  EXPECT_EQ(types->alignment(), 64u);
  EXPECT_EQ(types->get_string("t.string"), "h\xc3\xa9llo");
  EXPECT_EQ(types->get_int("t.i64"), -(int64_t{1} << 62));
  const Tensor t = types->tensor(*types->find_tensor("t.tensor"));
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.data<float>()[5], 5.0f);  // np.arange(6).reshape(2, 3)
}

// The cached real models. Expected values are those of the Hugging Face config.json of
// HuggingFaceTB/SmolLM2-135M-Instruct and google/gemma-3-270m (plus the GGUF's token ids).
std::string cached_model(const char* name) {
  const char* env = std::getenv("PAGODA_CACHE");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir =
      env != nullptr ? std::filesystem::path(env)
                     : std::filesystem::path(home != nullptr ? home : "") / ".cache/pagoda";
  const std::filesystem::path path = dir / name;
  return std::filesystem::exists(path) ? path.string() : std::string();
}

TEST(GgufModelReal, SmolLM2) {
  const std::string path = cached_model("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (path.empty())
    GTEST_SKIP() << "SmolLM2-135M-Instruct.Q4_1.gguf not in $PAGODA_CACHE or ~/.cache/pagoda";
  const LoadedModel m = load_gguf_model(GgufFile::open(path));
  const ModelSpec& s = m.spec;
  EXPECT_EQ(s.arch, Arch::Llama);
  EXPECT_EQ(s.vocab_size, 49152);
  EXPECT_EQ(s.hidden_size, 576);
  EXPECT_EQ(s.intermediate_size, 1536);
  EXPECT_EQ(s.num_layers, 30);
  EXPECT_EQ(s.num_heads, 9);
  EXPECT_EQ(s.num_kv_heads, 3);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_EQ(s.max_position_embeddings, 8192);
  EXPECT_FLOAT_EQ(s.rms_norm_eps, 1e-5f);
  EXPECT_FLOAT_EQ(s.rope_theta, 100000.0f);
  EXPECT_EQ(s.rope_scaling.type, RopeScalingType::None);
  EXPECT_FALSE(s.rope_neox);
  EXPECT_TRUE(s.tie_word_embeddings);
  EXPECT_FALSE(s.attention_bias);
  EXPECT_FALSE(s.qk_norm);
  EXPECT_EQ(s.bos_token_id, 1);
  EXPECT_EQ(s.eos_token_ids, std::vector<int>{2});
  EXPECT_EQ(m.weights.get("blk.0.attn_q.weight").dtype(), DType::Q4_1);
  EXPECT_EQ(m.weights.get("blk.0.attn_k.weight").shape(), (Shape{192, 576}));
  EXPECT_EQ(m.weights.get("output_norm.weight").dtype(), DType::F32);
}

TEST(GgufModelReal, Gemma3_270m) {
  const std::string path = cached_model("gemma-3-270m-q4_k_m.gguf");
  if (path.empty())
    GTEST_SKIP() << "gemma-3-270m-q4_k_m.gguf not in $PAGODA_CACHE or ~/.cache/pagoda";
  const LoadedModel m = load_gguf_model(GgufFile::open(path));
  const ModelSpec& s = m.spec;
  EXPECT_EQ(s.arch, Arch::Gemma3);
  EXPECT_EQ(s.vocab_size, 262144);
  EXPECT_EQ(s.hidden_size, 640);
  EXPECT_EQ(s.intermediate_size, 2048);
  EXPECT_EQ(s.num_layers, 18);
  EXPECT_EQ(s.num_heads, 4);
  EXPECT_EQ(s.num_kv_heads, 1);
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_EQ(s.max_position_embeddings, 32768);
  EXPECT_FLOAT_EQ(s.rms_norm_eps, 1e-6f);
  EXPECT_FLOAT_EQ(s.rope_theta, 1000000.0f);
  EXPECT_FLOAT_EQ(s.rope_local_theta, 10000.0f);
  EXPECT_FLOAT_EQ(s.query_pre_attn_scalar, 256.0f);
  EXPECT_EQ(s.sliding_window, 512);
  // config.json layer_types: five sliding_attention then one full_attention, repeated.
  ASSERT_EQ(s.layer_sliding.size(), 18u);
  for (int i = 0; i < 18; ++i) EXPECT_EQ(s.layer_sliding[static_cast<size_t>(i)], i % 6 != 5) << i;
  EXPECT_TRUE(s.rope_neox);
  EXPECT_TRUE(s.tie_word_embeddings);
  EXPECT_TRUE(s.qk_norm && s.embed_scale && s.sandwich_norms);
  EXPECT_EQ(s.activation, Activation::GeluTanh);
  EXPECT_EQ(s.final_logit_softcap, 0.0f);
  EXPECT_EQ(s.attn_logit_softcap, 0.0f);
  EXPECT_EQ(s.bos_token_id, 2);
  EXPECT_EQ(s.eos_token_ids, std::vector<int>{1});
  EXPECT_EQ(m.weights.get("token_embd.weight").dtype(), DType::Q8_0);
  EXPECT_EQ(m.weights.get("blk.0.attn_q_norm.weight").shape(), (Shape{256}));
}

}  // namespace
}  // namespace pagoda
