// Logits of the real GGUF models (SmolLM2-135M Q4_1, Gemma 3 270M Q4_K_M) against
// transformers' float32 forward pass over the same GGUF weights
// (golden data: tests/data/gguf_logits, made by tools/make_golden_gguf_logits.py).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "model/decoder.h"
#include "model/forward_util.h"

namespace pagoda {
namespace {

struct Case {
  const char* name;
  const char* file;
  // Max |logit difference| allowed. Both sides dequantize the same blocks bit-exactly and
  // compute in float32; only summation order differs (blocked SIMD dot products vs torch's
  // GEMM), ~1e-7 relative per op, accumulated over 30 (SmolLM2) / 18 (Gemma) layers with
  // logits of magnitude ~10-30. Observed: 5.6e-5 (SmolLM2) and 6.4e-5 (Gemma 3) with AVX-512;
  // 1e-3 leaves room for the other ISA paths while still catching any real error (a wrong
  // rope base or norm shifts logits by > 0.1).
  float tolerance;
  // Run with the q/k/v and gate/up projections stacked into one weight each (as on CUDA):
  // on the CPU they stack where the parts share a dtype (SmolLM2's Q4_1 does).
  bool stacked = false;
};

class GgufLogits : public ::testing::TestWithParam<Case> {};

TEST_P(GgufLogits, MatchTransformers) {
  const Case& c = GetParam();
  const std::string model_path = testing::model_cache_dir() + "/" + c.file;
  struct stat st {};
  if (::stat(model_path.c_str(), &st) != 0) GTEST_SKIP() << model_path << " absent: run scripts/fetch_models.sh";
  const std::string base = std::string(PAGODA_TEST_DATA) + "/gguf_logits/" + c.name;
  std::ifstream meta_file(base + ".json");
  ASSERT_TRUE(meta_file) << "missing golden " << base << ".json";
  const nlohmann::json meta = nlohmann::json::parse(meta_file);
  const std::vector<int32_t> ids = meta["ids"].get<std::vector<int32_t>>();
  const std::vector<int> columns = meta["columns"].get<std::vector<int>>();
  const std::vector<float> golden = testing::read_f32_file(base + ".bin");
  ASSERT_EQ(golden.size(), ids.size() * columns.size());

  LoadedModel loaded = load_model(model_path);
  auto backend = make_cpu_backend();
  std::unique_ptr<Model> model;
  {
    const testing::ScopedEnv stack("PAGODA_STACK_PROJECTIONS", c.stacked ? "1" : "0");
    model = make_model(loaded, *backend);
  }
  const auto* decoder = dynamic_cast<const Decoder*>(model.get());
  ASSERT_NE(decoder, nullptr);
  EXPECT_EQ(decoder->stacked_weights() >= 2 * model->spec().num_layers, c.stacked);
  ASSERT_EQ(model->spec().vocab_size, meta["vocab_size"].get<int>());
  const std::vector<float> logits = testing::all_position_logits(*model, *backend, ids, /*chunk=*/24);

  const size_t vocab = static_cast<size_t>(model->spec().vocab_size);
  float max_diff = 0;
  int checked_top1 = 0;
  for (size_t t = 0; t < ids.size(); ++t) {
    const float* row = logits.data() + t * vocab;
    for (size_t j = 0; j < columns.size(); ++j) {
      max_diff = std::max(max_diff, std::fabs(row[columns[j]] - golden[t * columns.size() + j]));
    }
    const float margin = meta["top1_logits"][t].get<float>() - meta["top2_logits"][t].get<float>();
    if (margin > c.tolerance) {
      const int ours = static_cast<int>(std::max_element(row, row + vocab) - row);
      EXPECT_EQ(ours, meta["top1_ids"][t].get<int>()) << "position " << t;
      ++checked_top1;
    }
  }
  std::printf("%s: max |dlogit| %.3g over %zu positions x %zu columns, top-1 checked at %d\n",
              c.name, max_diff, ids.size(), columns.size(), checked_top1);
  EXPECT_LE(max_diff, c.tolerance);
  EXPECT_GT(checked_top1, static_cast<int>(ids.size()) / 2);
}

INSTANTIATE_TEST_SUITE_P(RealModels, GgufLogits,
                         ::testing::Values(Case{"smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", 1e-3f},
                                           Case{"smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", 1e-3f, true},
                                           Case{"gemma3", "gemma-3-270m-q4_k_m.gguf", 1e-3f}),
                         [](const auto& p) { return std::string(p.param.name) + (p.param.stacked ? "_stacked" : ""); });

}  // namespace
}  // namespace pagoda
