// filter_candidates against a plain reference (full sort, double precision) on vocabularies
// large enough to exercise top_p's pre-selection and its fallback for long tails.
#include "sample/filters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <vector>

namespace pagoda {
namespace {

struct Reference {
  std::vector<int32_t> ids;  // ascending
  std::vector<double> probs;
  bool near_boundary = false;  // a cut within rounding distance: skip the comparison
};

Reference reference(const std::vector<float>& raw, const SamplingParams& params) {
  std::vector<double> l(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) l[i] = raw[i] / params.temperature;
  const double m = *std::max_element(l.begin(), l.end());
  std::vector<int32_t> alive(raw.size());
  std::iota(alive.begin(), alive.end(), 0);
  Reference out;
  if (params.min_p > 0) {
    std::vector<int32_t> next;
    for (int32_t i : alive) {
      const double rel = std::exp(l[i] - m);
      if (std::abs(rel - params.min_p) < 1e-6) out.near_boundary = true;
      if (rel >= params.min_p) next.push_back(i);
    }
    alive = next;
  }
  std::sort(alive.begin(), alive.end(), [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  if (params.top_k > 0 && static_cast<size_t>(params.top_k) < alive.size()) {
    const double kth = l[alive[params.top_k - 1]];
    while (l[alive.back()] < kth) alive.pop_back();
  }
  if (params.top_p < 1) {
    double total = 0;
    for (int32_t i : alive) total += std::exp(l[i] - m);
    double before = 0;
    size_t keep = 0;
    double before_last = 0;
    while (keep < alive.size() && (keep == 0 || before < params.top_p * total)) {
      before_last = before;
      before += std::exp(l[alive[keep++]] - m);
    }
    // pagoda's weights are float exps: sums may differ from these by ~1e-7 relative.
    if (std::abs(before_last / total - params.top_p) < 1e-6 ||
        (keep < alive.size() && std::abs(before / total - params.top_p) < 1e-6)) {
      out.near_boundary = true;
    }
    while (keep < alive.size() && l[alive[keep]] == l[alive[keep - 1]]) ++keep;
    alive.resize(keep);
  }
  double total = 0;
  for (int32_t i : alive) total += std::exp(l[i] - m);
  std::sort(alive.begin(), alive.end());
  for (int32_t i : alive) out.probs.push_back(std::exp(l[i] - m) / total);
  out.ids = alive;
  return out;
}

// Returns false when the case was skipped as too close to a boundary to decide.
bool expect_matches(const std::vector<float>& logits, const SamplingParams& params, int trial) {
  const Reference want = reference(logits, params);
  if (want.near_boundary) return false;
  Candidates c;
  filter_candidates(logits, params, c);
  std::map<int32_t, double> got;
  for (size_t i = 0; i < c.ids.size(); ++i) got[c.ids[i]] = c.probs[i];
  EXPECT_EQ(got.size(), want.ids.size()) << "trial " << trial;
  for (size_t i = 0; i < want.ids.size(); ++i) {
    if (!got.count(want.ids[i])) {
      ADD_FAILURE() << "trial " << trial << " token " << want.ids[i] << " missing";
      break;
    }
    EXPECT_NEAR(got[want.ids[i]], want.probs[i], 1e-6) << "trial " << trial;
  }
  return true;
}

TEST(Filters, LargeVocabularyMatchesFullSortReference) {
  std::mt19937 gen(21);
  int compared = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const size_t vocab = 8000;
    const float scale = std::vector<float>{0.05f, 1.0f, 4.0f}[trial % 3];
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> logits(vocab);
    for (float& l : logits) l = normal(gen);
    SamplingParams params;
    params.temperature = std::uniform_real_distribution<float>(0.3f, 2.0f)(gen);
    params.top_p = std::vector<float>{0.5f, 0.9f, 0.99f, 1.0f}[trial % 4];
    params.top_k = std::vector<int32_t>{0, 0, 40, 5000, 0}[trial % 5];
    params.min_p = trial % 7 == 0 ? 0.05f : 0.0f;
    compared += expect_matches(logits, params, trial);
  }
  EXPECT_GE(compared, 25);
}

TEST(Filters, LongTailTopPFallsBackToTheWholeTail) {
  // One dominant token (weight 1) and 20000 tail tokens of weight ~2.5e-5 each (total
  // ~0.5): top_p 0.9 needs mass 0.9 * 1.5, so the nucleus reaches deep into the tail, below
  // the first pre-selection threshold. A draw whose cut is too close to call is redrawn.
  int compared = 0;
  for (uint32_t seed = 0; seed < 10 && compared == 0; ++seed) {
    std::mt19937 gen(22 + seed);
    std::uniform_real_distribution<float> jitter(-0.5f, 0.5f);
    std::vector<float> logits(20001);
    logits[0] = 0.0f;
    for (size_t i = 1; i < logits.size(); ++i) logits[i] = std::log(2.5e-5f) + jitter(gen);
    SamplingParams params;
    params.top_p = 0.9f;
    if (!expect_matches(logits, params, static_cast<int>(seed))) continue;
    ++compared;
    Candidates c;
    filter_candidates(logits, params, c);
    EXPECT_GT(c.ids.size(), 5000u);
  }
  EXPECT_EQ(compared, 1);
}

}  // namespace
}  // namespace pagoda
