#include "sample/logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "sample/filters.h"
#include "sample/sampler.h"

namespace pagoda {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Direct computation in long double.
std::vector<long double> direct_logprobs(const std::vector<float>& logits) {
  long double sum = 0.0L;
  for (float l : logits) sum += std::exp(static_cast<long double>(l));
  std::vector<long double> out;
  for (float l : logits) out.push_back(static_cast<long double>(l) - std::log(sum));
  return out;
}

TEST(Logprobs, LogSoftmaxMatchesDirectComputation) {
  std::mt19937 gen(11);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> logits(300);
    for (float& l : logits) l = normal(gen) + 50.0f;  // an offset the max-shift must absorb
    std::vector<float> ours(logits.size());
    log_softmax(logits, ours);
    const std::vector<long double> want = direct_logprobs(logits);
    for (size_t i = 0; i < logits.size(); ++i) ASSERT_NEAR(ours[i], want[i], 2e-5) << i;
  }
}

TEST(Logprobs, RanksCountTokensAtLeastAsLikely) {
  // Ties: token 2 shares the top logprob with token 0; vLLM counts >=, so both rank 2.
  const std::vector<float> logits = {3.0f, 1.0f, 3.0f, 2.0f, kNegInf};
  std::vector<float> lp(logits.size());
  log_softmax(logits, lp);
  std::vector<uint32_t> order;
  EXPECT_EQ(gather_logprobs(lp, 0, 0, order).sampled.rank, 2);
  EXPECT_EQ(gather_logprobs(lp, 2, 0, order).sampled.rank, 2);
  EXPECT_EQ(gather_logprobs(lp, 3, 0, order).sampled.rank, 3);
  EXPECT_EQ(gather_logprobs(lp, 1, 0, order).sampled.rank, 4);
  EXPECT_EQ(gather_logprobs(lp, 4, 0, order).sampled.rank, 5);
  EXPECT_EQ(gather_logprobs(lp, 4, 0, order).sampled.logprob, kNegInf);

  const TokenLogprobs top = gather_logprobs(lp, 1, 3, order);
  ASSERT_EQ(top.top.size(), 3u);
  EXPECT_EQ(top.top[0].token, 0);  // ties by ascending id
  EXPECT_EQ(top.top[1].token, 2);
  EXPECT_EQ(top.top[2].token, 3);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(top.top[i].rank, static_cast<int64_t>(i + 1));
    EXPECT_EQ(top.top[i].logprob, lp[top.top[i].token]);
  }
  EXPECT_EQ(gather_logprobs(lp, 1, -1, order).top.size(), logits.size());  // -1: all
  EXPECT_EQ(gather_logprobs(lp, 1, 99, order).top.size(), logits.size());
}

TEST(Logprobs, RandomRowsMatchBruteForce) {
  std::mt19937 gen(12);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<uint32_t> order;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<float> logits(100);
    for (float& l : logits) l = std::round(normal(gen) * 4.0f) / 4.0f;  // many ties
    std::vector<float> lp(logits.size());
    log_softmax(logits, lp);
    const auto token = static_cast<int32_t>(gen() % logits.size());
    const TokenLogprobs got = gather_logprobs(lp, token, 7, order);
    int64_t rank = 0;
    for (float l : logits) rank += l >= logits[token];
    EXPECT_EQ(got.sampled.rank, rank);
    // Each listed token is at least as likely as every unlisted one, in order.
    std::vector<bool> listed(logits.size(), false);
    for (size_t i = 0; i < got.top.size(); ++i) {
      listed[got.top[i].token] = true;
      if (i > 0) {
        EXPECT_GE(lp[got.top[i - 1].token], lp[got.top[i].token]);
      }
    }
    for (size_t t = 0; t < logits.size(); ++t) {
      if (!listed[t]) {
        EXPECT_LE(lp[t], got.top.back().logprob);
      }
    }
  }
}

TEST(Logprobs, SamplerRawModeIgnoresProcessing) {
  // A bias that makes token 0 certain must not show in the default (raw) logprobs.
  Sampler sampler;
  Rng rng(1);
  SamplingParams params;
  params.logprobs = 2;
  params.logit_bias = {{0, 100.0f}};
  const std::vector<float> raw = {0.0f, 1.0f, 2.0f};
  std::vector<float> logits = raw;
  const SampleResult result = sampler.sample({logits, &params, {}, {}, &rng});
  EXPECT_EQ(result.token, 0);
  const std::vector<long double> want = direct_logprobs(raw);
  EXPECT_NEAR(result.logprobs->sampled.logprob, want[0], 1e-6);
  EXPECT_EQ(result.logprobs->sampled.rank, 3);
  EXPECT_EQ(result.logprobs->top[0].token, 2);
  EXPECT_EQ(result.logprobs->top[1].token, 1);
}

TEST(Logprobs, SamplerProcessedModeDescribesTheSampledDistribution) {
  Sampler sampler(LogprobsMode::kProcessed);
  Rng rng(2);
  SamplingParams params;
  params.logprobs = 3;
  params.top_k = 2;
  params.temperature = 0.5f;
  const std::vector<float> raw = {0.0f, 1.0f, 2.0f, 0.5f};
  std::vector<float> logits = raw;
  const SampleResult result = sampler.sample({logits, &params, {}, {}, &rng});
  // Survivors 2 and 1 with logits 4 and 2 after temperature: p = e^4 / (e^4 + e^2) ...
  const double p2 = 1.0 / (1.0 + std::exp(-2.0));
  const TokenLogprobs& lp = *result.logprobs;
  ASSERT_EQ(lp.top.size(), 3u);
  EXPECT_EQ(lp.top[0].token, 2);
  EXPECT_NEAR(lp.top[0].logprob, std::log(p2), 1e-6);
  EXPECT_EQ(lp.top[1].token, 1);
  EXPECT_NEAR(lp.top[1].logprob, std::log(1.0 - p2), 1e-6);
  EXPECT_EQ(lp.top[2].logprob, kNegInf);  // filtered out
  EXPECT_TRUE(result.token == 1 || result.token == 2);
}

TEST(Filters, TiesAtTheCutoffAllSurvive) {
  // Documented rule: tokens tied with the last survivor survive, for top_k and top_p alike.
  Candidates c;
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 0.0f, 3.0f, 2.0f};
  SamplingParams params;
  params.top_k = 2;
  filter_candidates(logits, params, c);
  EXPECT_EQ(c.ids, (std::vector<int32_t>{1, 2, 4}));
  for (double p : c.probs) EXPECT_NEAR(p, 1.0 / 3.0, 1e-12);
  params.top_k = 0;
  params.top_p = 0.1f;  // the first token alone would do; its two ties come along
  filter_candidates(logits, params, c);
  EXPECT_EQ(c.ids, (std::vector<int32_t>{1, 2, 4}));
  params.top_p = 1.0f;
  params.top_k = 4;
  filter_candidates(logits, params, c);
  EXPECT_EQ(c.ids, (std::vector<int32_t>{1, 2, 4, 5}));  // sorted by logit, then id
}

TEST(Filters, MinPOneKeepsOnlyTheTop) {
  Candidates c;
  SamplingParams params;
  params.min_p = 1.0f;
  filter_candidates(std::vector<float>{0.5f, 2.0f, 1.9f}, params, c);
  EXPECT_EQ(c.ids, (std::vector<int32_t>{1}));
  EXPECT_EQ(c.probs, (std::vector<double>{1.0}));
}

}  // namespace
}  // namespace pagoda
