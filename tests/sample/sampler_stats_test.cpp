// Sampling frequencies match the filtered distribution (chi-square, fixed seeds).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "sample/sampler.h"

namespace pagoda {
namespace {

// Token probabilities, placed at shuffled ids so that nothing depends on id order.
const std::vector<double> kProbs = {0.3, 0.2, 0.15, 0.1, 0.08, 0.06, 0.05, 0.03, 0.02, 0.01};

struct Case {
  SamplingParams params;
  std::vector<double> expected;  // by rank in kProbs; worked out by hand from kProbs
};

std::vector<double> normalized(std::vector<double> w) {
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& x : w) x /= total;
  return w;
}

std::vector<Case> setups() {
  std::vector<Case> s;
  auto add = [&](auto set, std::vector<double> weights) {
    Case setup;
    set(setup.params);
    weights.resize(kProbs.size(), 0.0);
    setup.expected = normalized(weights);
    s.push_back(setup);
  };
  add([](SamplingParams&) {}, kProbs);
  add([](SamplingParams& p) { p.top_k = 3; }, {0.3, 0.2, 0.15});
  // Mass before token 3 is 0.65 < 0.7: kept; before token 4 it is 0.75: cut.
  add([](SamplingParams& p) { p.top_p = 0.7f; }, {0.3, 0.2, 0.15, 0.1});
  // p / 0.3 >= 0.25 <=> p >= 0.075.
  add([](SamplingParams& p) { p.min_p = 0.25f; }, {0.3, 0.2, 0.15, 0.1, 0.08});
  // Temperature 2: weights p^(1/2); then top_k 2.
  add([](SamplingParams& p) { p.temperature = 2.0f; p.top_k = 2; },
      {std::sqrt(0.3), std::sqrt(0.2)});
  // Temperature 0.5: weights p^2 = .09 .04 .0225 .01 .0064 ...; top_p 0.9 of that:
  // total .1763...; masses before: 0, .510, .737, .865 (< .9, kept), .922 (cut).
  add([](SamplingParams& p) { p.temperature = 0.5f; p.top_p = 0.9f; },
      {0.09, 0.04, 0.0225, 0.01});
  // min_p, then top_k, then top_p on what is left: min_p 0.1 keeps p >= 0.03 (8 tokens,
  // mass .97), top_k 5 keeps .3 .2 .15 .1 .08 (mass .83), top_p 0.5 on those: before
  // token 1 is .3/.83 = .36 (kept), before token 2 is .5/.83 = .60 (cut).
  add([](SamplingParams& p) { p.min_p = 0.1f; p.top_k = 5; p.top_p = 0.5f; }, {0.3, 0.2});
  return s;
}

TEST(SamplerStats, FrequenciesMatchFilteredDistribution) {
  std::vector<int32_t> id_of_rank(kProbs.size());
  std::iota(id_of_rank.begin(), id_of_rank.end(), 0);
  std::shuffle(id_of_rank.begin(), id_of_rank.end(), std::mt19937(3));
  std::vector<float> logits(kProbs.size());
  for (size_t r = 0; r < kProbs.size(); ++r) logits[id_of_rank[r]] = std::log(static_cast<float>(kProbs[r]));

  Sampler sampler;
  const std::vector<Case> all = setups();
  for (size_t s = 0; s < all.size(); ++s) {
    Rng rng(1000 + static_cast<int64_t>(s));
    constexpr int kDraws = 100000;
    std::vector<int> counts(kProbs.size(), 0);
    for (int i = 0; i < kDraws; ++i) {
      std::vector<float> row = logits;
      ++counts[sampler.sample({row, &all[s].params, {}, {}, &rng}).token];
    }
    double chi2 = 0.0;
    int df = -1;
    for (size_t r = 0; r < kProbs.size(); ++r) {
      const int observed = counts[id_of_rank[r]];
      const double expected = all[s].expected[r] * kDraws;
      if (expected == 0.0) {
        EXPECT_EQ(observed, 0) << "setup " << s << ": filtered-out token of rank " << r << " drawn";
        continue;
      }
      chi2 += (observed - expected) * (observed - expected) / expected;
      ++df;
    }
    // Generous: the 0.999 quantile for df <= 9 is below 28; a wrong filter gives thousands.
    EXPECT_LT(chi2, 3.0 * df + 25.0) << "setup " << s << " df " << df;
  }
}

TEST(SamplerStats, UniformDrawsAreUniform) {
  // The Rng itself: 64 equal buckets of next_double().
  Rng rng(5);
  std::vector<int> buckets(64, 0);
  constexpr int kDraws = 640000;
  for (int i = 0; i < kDraws; ++i) ++buckets[static_cast<size_t>(rng.next_double() * 64)];
  double chi2 = 0.0;
  for (int b : buckets) chi2 += (b - 10000.0) * (b - 10000.0) / 10000.0;
  EXPECT_LT(chi2, 120.0);  // df 63; 0.999 quantile ~ 103
}

}  // namespace
}  // namespace pagoda
