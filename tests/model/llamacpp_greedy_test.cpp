// Greedy generation of 64 tokens on the real GGUF models against llama.cpp's
// (golden data: tests/data/llamacpp, made by tools/make_golden_llamacpp.py). All prompts
// run together in one batch, so this also checks that batching changes nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "model/forward_util.h"
#include "runner/batch_generator.h"

namespace pagoda {
namespace {

// llama.cpp quantizes activations to 8 bits inside its quantized matmuls (Q8_0/Q8_1/Q8_K)
// and keeps K/V in f16, while we compute in float32 as transformers does (our logits match
// transformers' to < 1e-4, see gguf_logits_test). Its logits therefore differ from ours by
// up to ~0.1-0.3, and greedy paths part wherever llama.cpp's own top-1/top-2 margin is that
// small. So every case must agree token for token until it diverges, and a divergence is
// accepted only at a near-tie of llama.cpp: a margin below kNearTie. On top of that, the
// criterion of the project's issue #2: at least kMinIdentical cases per model are
// identical to llama.cpp for all 64 tokens. (On the first 8 cases alone: SmolLM2 1 of 8
// identical, Gemma 3 3 of 8, every divergence at a llama.cpp margin of 0.012-0.391;
// emulating llama.cpp's activation quantization bit-exactly only raised that to 3 and 4
// of 8, as the rest of its numerics (f16 attention) differ too. Hence 40 prompts.)
constexpr double kNearTie = 0.5;
constexpr int kMinIdentical = 5;

struct Case {
  const char* name;
  const char* file;
};

class LlamaCppGreedy : public ::testing::TestWithParam<Case> {};

TEST_P(LlamaCppGreedy, MatchesLlamaCpp) {
  const Case& c = GetParam();
  if (std::getenv("PAGODA_SKIP_SLOW") != nullptr) GTEST_SKIP() << "slow test skipped (PAGODA_SKIP_SLOW)";
  const std::string model_path = testing::model_cache_dir() + "/" + c.file;
  struct stat st {};
  if (::stat(model_path.c_str(), &st) != 0) GTEST_SKIP() << model_path << " absent: run scripts/fetch_models.sh";
  std::ifstream golden_file(std::string(PAGODA_TEST_DATA) + "/llamacpp/greedy_" + c.name + ".json");
  ASSERT_TRUE(golden_file) << "missing golden data for " << c.name;
  const nlohmann::json golden = nlohmann::json::parse(golden_file);

  std::vector<std::vector<int32_t>> prompts;
  for (const auto& cs : golden["cases"]) prompts.push_back(cs["prompt_ids"].get<std::vector<int32_t>>());
  LoadedModel loaded = load_model(model_path);
  auto backend = make_cpu_backend();
  auto model = make_model(loaded, *backend);
  BatchGenerator generator(*model, *backend);
  GenerateOptions options;
  options.max_tokens = 64;
  options.stop_at_eos = false;
  options.prefill_chunk = 32;
  const auto outputs = generator.generate(prompts, options);

  int exact = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto expected = golden["cases"][i]["output_ids"].get<std::vector<int32_t>>();
    const auto margins = golden["cases"][i]["top2_margins"].get<std::vector<double>>();
    ASSERT_EQ(outputs[i].size(), expected.size());
    size_t first_diff = 0;
    while (first_diff < expected.size() && outputs[i][first_diff] == expected[first_diff]) ++first_diff;
    if (first_diff == expected.size()) {
      ++exact;
      continue;
    }
    std::printf("%s case %zu diverges at step %zu (llama.cpp margin %.3f)\n", c.name, i, first_diff,
                margins[first_diff]);
    EXPECT_LT(margins[first_diff], kNearTie) << c.name << " case " << i << " diverges at step "
                                             << first_diff << " where llama.cpp is not near a tie";
  }
  std::printf("%s: %d of %zu cases identical to llama.cpp for all 64 tokens\n", c.name, exact,
              prompts.size());
  EXPECT_GE(exact, kMinIdentical) << c.name << ": only " << exact << " of " << prompts.size()
                                  << " cases identical to llama.cpp for all 64 tokens";
}

INSTANTIATE_TEST_SUITE_P(RealModels, LlamaCppGreedy,
                         ::testing::Values(Case{"smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"},
                                           Case{"gemma3", "gemma-3-270m-q4_k_m.gguf"}),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace pagoda
