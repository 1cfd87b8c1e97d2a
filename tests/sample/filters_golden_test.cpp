// The processors and filters against Hugging Face transformers' logits warpers
// (tests/data/sampling/filters.json, made by tools/make_golden_sampling.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "sample/filters.h"
#include "sample/logits_processors.h"
#include "sample/logprobs.h"
#include "sample/sampler.h"

namespace pagoda {
namespace {

struct GoldenCase {
  SamplingParams params;
  std::vector<int32_t> prompt, output;  // the history, split in two (the penalty sees both)
  std::vector<float> logits, penalized, raw_logprobs;
  std::vector<int32_t> survivors;
  std::vector<double> probs;
};

std::vector<GoldenCase> load_cases() {
  std::ifstream in(std::string(PAGODA_TEST_DATA) + "/sampling/filters.json");
  EXPECT_TRUE(in.good()) << "missing tests/data/sampling/filters.json";
  if (!in.good()) return {};
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<GoldenCase> cases;
  for (const auto& c : doc.at("cases")) {
    GoldenCase g;
    const auto& p = c.at("params");
    g.params.temperature = p.at("temperature").get<float>();
    g.params.top_k = p.at("top_k").get<int32_t>();
    g.params.top_p = p.at("top_p").get<float>();
    g.params.min_p = p.at("min_p").get<float>();
    g.params.repetition_penalty = p.at("repetition_penalty").get<float>();
    const auto history = c.at("history").get<std::vector<int32_t>>();
    const size_t split = history.size() / 2;
    g.prompt.assign(history.begin(), history.begin() + static_cast<ptrdiff_t>(split));
    g.output.assign(history.begin() + static_cast<ptrdiff_t>(split), history.end());
    g.logits = c.at("logits").get<std::vector<float>>();
    g.penalized = c.at("penalized").get<std::vector<float>>();
    g.raw_logprobs = c.at("raw_logprobs").get<std::vector<float>>();
    g.survivors = c.at("survivors").get<std::vector<int32_t>>();
    g.probs = c.at("probs").get<std::vector<double>>();
    cases.push_back(std::move(g));
  }
  return cases;
}

const std::vector<GoldenCase>& cases() {
  static const std::vector<GoldenCase> loaded = load_cases();
  return loaded;
}

TEST(SamplingGolden, HasCases) { EXPECT_EQ(cases().size(), 90u); }

TEST(SamplingGolden, RepetitionPenaltyMatchesHf) {
  ProcessorScratch scratch;
  for (size_t i = 0; i < cases().size(); ++i) {
    const GoldenCase& g = cases()[i];
    std::vector<float> logits = g.logits;
    apply_logits_processors(logits, g.params, g.prompt, g.output, scratch);
    // One IEEE multiply or divide per token on both sides: bit-exact.
    ASSERT_EQ(logits, g.penalized) << "case " << i;
  }
}

TEST(SamplingGolden, SurvivorsAndProbabilitiesMatchHf) {
  Candidates candidates;
  for (size_t i = 0; i < cases().size(); ++i) {
    const GoldenCase& g = cases()[i];
    filter_candidates(g.penalized, g.params, candidates);
    std::map<int32_t, double> ours;
    for (size_t j = 0; j < candidates.ids.size(); ++j) ours[candidates.ids[j]] = candidates.probs[j];
    std::vector<int32_t> ids;
    for (const auto& [id, prob] : ours) ids.push_back(id);
    ASSERT_EQ(ids, g.survivors) << "case " << i << " top_k=" << g.params.top_k
                                << " top_p=" << g.params.top_p << " min_p=" << g.params.min_p;
    for (size_t j = 0; j < g.survivors.size(); ++j) {
      EXPECT_NEAR(ours[g.survivors[j]], g.probs[j], 1e-6) << "case " << i << " token "
                                                          << g.survivors[j];
    }
  }
}

TEST(SamplingGolden, RawLogprobsMatchTorchLogSoftmax) {
  for (size_t i = 0; i < cases().size(); ++i) {
    const GoldenCase& g = cases()[i];
    std::vector<float> ours(g.logits.size());
    log_softmax(g.logits, ours);
    for (size_t j = 0; j < ours.size(); ++j) {
      ASSERT_NEAR(ours[j], g.raw_logprobs[j], 1e-5) << "case " << i << " token " << j;
    }
  }
}

TEST(SamplingGolden, SamplerDrawsSurvivorsAndReportsRawLogprobs) {
  Sampler sampler;
  Rng rng(7);
  for (size_t i = 0; i < cases().size(); ++i) {
    const GoldenCase& g = cases()[i];
    SamplingParams params = g.params;
    params.logprobs = 5;
    std::vector<float> logits = g.logits;
    const SampleResult result = sampler.sample({logits, &params, g.prompt, g.output, &rng});
    ASSERT_TRUE(std::binary_search(g.survivors.begin(), g.survivors.end(), result.token))
        << "case " << i;
    ASSERT_TRUE(result.logprobs.has_value());
    const TokenLogprobs& lp = *result.logprobs;
    // vLLM's default: logprobs of the raw model output, not of the filtered distribution.
    EXPECT_NEAR(lp.sampled.logprob, g.raw_logprobs[result.token], 1e-5);
    std::vector<int32_t> by_logprob(g.raw_logprobs.size());
    for (size_t j = 0; j < by_logprob.size(); ++j) by_logprob[j] = static_cast<int32_t>(j);
    std::stable_sort(by_logprob.begin(), by_logprob.end(), [&](int32_t a, int32_t b) {
      return g.raw_logprobs[a] > g.raw_logprobs[b];
    });
    ASSERT_EQ(lp.top.size(), 5u);
    for (size_t j = 0; j < 5; ++j) {
      EXPECT_EQ(lp.top[j].token, by_logprob[j]) << "case " << i;
      EXPECT_EQ(lp.top[j].rank, static_cast<int64_t>(j + 1));
    }
    const auto pos = std::find(by_logprob.begin(), by_logprob.end(), result.token);
    EXPECT_EQ(lp.sampled.rank, pos - by_logprob.begin() + 1) << "case " << i;
  }
}

}  // namespace
}  // namespace pagoda
