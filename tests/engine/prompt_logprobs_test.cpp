// prompt_logprobs against transformers on exact weights: the random-weight SmolLM2-shaped
// checkpoint tests/data/hf/smollm2-fp32, whose golden prompt logprobs
// (tests/data/prompt_logprobs/smollm2-fp32.json, tools/make_golden_prompt_logprobs.py) come
// from transformers' float32 logits. Chunked prefill must deliver every position, and a
// cached prefix must not be reused (its logits would be missing).
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

// Both sides run float32 on the same weights: the logits agree to 2e-4 (hf_logits_test's
// bound, observed 3e-5), and a log_softmax moves by at most the logit error plus the error
// of the log-sum-exp, itself bounded by the largest logit error: 4e-4 in all.
constexpr float kTolerance = 4e-4f;

struct Setup {
  LoadedModel loaded;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
  nlohmann::json golden;
};

std::unique_ptr<Setup> load() {
  const std::string dir = std::string(PAGODA_TEST_DATA) + "/hf/smollm2-fp32";
  const std::string golden = std::string(PAGODA_TEST_DATA) + "/prompt_logprobs/smollm2-fp32.json";
  if (!std::filesystem::exists(dir) || !std::filesystem::exists(golden)) return nullptr;
  auto s = std::make_unique<Setup>();
  s->loaded = load_model(dir);
  s->backend = make_cpu_backend();
  s->model = make_model(s->loaded, *s->backend);
  std::ifstream f(golden);
  s->golden = nlohmann::json::parse(f);
  return s;
}

// The checkpoint has no tokenizer; SmolLM2's only decodes the sampled text, which these
// tests do not look at (ids < 512 are valid in its vocabulary).
std::unique_ptr<EngineCore> core_for(Setup& s, ModelBundle& tok, int max_batched_tokens) {
  EngineOptions o;
  o.max_model_len = 256;
  o.kv_cache_memory = int64_t{8} << 20;
  o.max_num_batched_tokens = max_batched_tokens;
  o.block_size = 16;
  return std::make_unique<EngineCore>(*s.model, *s.backend, tok.tokenizer(), o);
}

SamplingParams scoring(int num_top) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = 2;
  p.ignore_eos = true;
  p.prompt_logprobs = num_top;
  return p;
}

// The first delta of each (id, index) with prompt logprobs.
std::map<std::pair<RequestId, int>, std::vector<TokenLogprobs>> run(EngineCore& core) {
  std::map<std::pair<RequestId, int>, std::vector<TokenLogprobs>> got;
  while (core.has_unfinished_requests()) {
    for (RequestOutput& d : core.step()) {
      if (d.prompt_logprobs.empty()) continue;
      EXPECT_FALSE(got.count({d.id, d.index})) << d.id << ": prompt logprobs twice";
      got[{d.id, d.index}] = std::move(d.prompt_logprobs);
    }
  }
  return got;
}

void expect_matches_golden(const std::vector<TokenLogprobs>& ours, const nlohmann::json& golden) {
  const auto& entries = golden["entries"];
  ASSERT_EQ(ours.size(), entries.size());
  float max_diff = 0;
  for (size_t k = 0; k < ours.size(); ++k) {
    const auto& e = entries[k];
    const TokenLogprobs& o = ours[k];
    EXPECT_EQ(o.sampled.token, e["token"].get<int32_t>()) << "position " << k + 1;
    max_diff = std::max(max_diff, std::fabs(o.sampled.logprob - e["logprob"].get<float>()));
    ASSERT_EQ(o.top.size(), e["top"].size()) << "position " << k + 1;
    for (size_t j = 0; j < o.top.size(); ++j) {
      const float ref = e["top"][j][1].get<float>();
      EXPECT_EQ(o.top[j].rank, static_cast<int64_t>(j + 1));
      max_diff = std::max(max_diff, std::fabs(o.top[j].logprob - ref));
      // Ids and ranks are compared only where the reference's neighbours are farther apart
      // than the tolerance: a closer pair may swap under float32 summation order.
      const bool clear_above = j == 0 || e["top"][j - 1][1].get<float>() - ref > kTolerance;
      const bool clear_below =
          j + 1 >= o.top.size() || ref - e["top"][j + 1][1].get<float>() > kTolerance;
      if (clear_above && clear_below) {
        EXPECT_EQ(o.top[j].token, e["top"][j][0].get<int32_t>())
            << "position " << k + 1 << " top " << j;
      }
    }
    const int64_t rank = e["rank"].get<int64_t>();
    if (rank <= static_cast<int64_t>(o.top.size())) {
      EXPECT_NEAR(static_cast<double>(o.sampled.rank), static_cast<double>(rank), 1.0)
          << "position " << k + 1;
    } else {
      // Far down the list a few neighbours within the tolerance may reorder.
      EXPECT_NEAR(static_cast<double>(o.sampled.rank), static_cast<double>(rank), 3.0)
          << "position " << k + 1;
    }
  }
  std::printf("prompt logprobs: max |dlogprob| %.3g over %zu positions\n", max_diff, ours.size());
  EXPECT_LE(max_diff, kTolerance);
}

TEST(PromptLogprobs, MatchTransformersOverAChunkedPrefillDespiteACachedPrefix) {
  PAGODA_NEED_SMOLLM2(tok);
  auto s = load();
  if (!s) GTEST_SKIP() << "tests/data/hf/smollm2-fp32 or its golden prompt logprobs are missing";
  const std::vector<int32_t> ids = s->golden["ids"].get<std::vector<int32_t>>();
  const int top_k = s->golden["top_k"].get<int>();
  auto core = core_for(*s, *tok, 24);  // 80 prompt tokens: 4 chunks, the last one with the sample

  // Warm the prefix cache with the same prompt: the scoring request must not use it.
  SamplingParams plain = scoring(top_k);
  plain.prompt_logprobs.reset();
  core->add_request("warm", ids, plain);
  (void)run(*core);
  const PrefixCacheStats before = core->scheduler().stats().prefix_cache;
  core->add_request("score", ids, scoring(top_k));
  const auto got = run(*core);
  EXPECT_EQ(core->scheduler().stats().prefix_cache.hits, before.hits)
      << "a scoring request read the prefix cache";
  ASSERT_TRUE(got.count({"score", 0}));
  expect_matches_golden(got.at({"score", 0}), s->golden);
  // The scoring request cached its blocks for others as usual.
  core->add_request("after", ids, plain);
  (void)run(*core);
  EXPECT_GE(core->scheduler().stats().prefix_cache.hits - before.hits, 64);
}

TEST(PromptLogprobs, ComeOnceOnChoiceZeroOfAnNChoiceRequest) {
  PAGODA_NEED_SMOLLM2(tok);
  auto s = load();
  if (!s) GTEST_SKIP() << "golden data missing";
  const std::vector<int32_t> ids = s->golden["ids"].get<std::vector<int32_t>>();
  auto core = core_for(*s, *tok, 256);
  SamplingParams p = scoring(s->golden["top_k"].get<int>());
  p.n = 3;
  p.temperature = 1.0f;
  p.seed = 5;
  core->add_request("n3", ids, p);
  // As in vLLM, -1 (the whole vocabulary) counts as vocab_size against max_logprobs (20).
  EXPECT_THROW(core->add_request("all", ids, scoring(-1)), Error);
  const auto got = run(*core);
  ASSERT_EQ(got.size(), 1u) << "prompt logprobs on other choices than 0";
  expect_matches_golden(got.at({"n3", 0}), s->golden);
}

}  // namespace
}  // namespace pagoda::testing
