#include "sample/filters.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/error.h"

namespace pagoda {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Keeps the candidates at positions order[0, count), in that order.
void keep_in_order(Candidates& c, size_t count) {
  c.spare_ids.resize(count);
  c.spare_logits.resize(count);
  for (size_t i = 0; i < count; ++i) {
    c.spare_ids[i] = c.ids[c.order[i]];
    c.spare_logits[i] = c.logits[c.order[i]];
  }
  c.ids.swap(c.spare_ids);
  c.logits.swap(c.spare_logits);
}

// Keeps the candidates for which keep(logit) holds, in their current order.
template <class Keep>
void keep_if(Candidates& c, Keep keep) {
  size_t out = 0;
  for (size_t i = 0; i < c.ids.size(); ++i) {
    if (!keep(c.logits[i])) continue;
    c.ids[out] = c.ids[i];
    c.logits[out] = c.logits[i];
    ++out;
  }
  c.ids.resize(out);
  c.logits.resize(out);
}

// Orders the candidates by descending logit, ties by ascending id.
void sort_descending(Candidates& c) {
  c.order.resize(c.ids.size());
  for (size_t i = 0; i < c.order.size(); ++i) c.order[i] = static_cast<uint32_t>(i);
  std::sort(c.order.begin(), c.order.end(), [&c](uint32_t a, uint32_t b) {
    return c.logits[a] > c.logits[b] || (c.logits[a] == c.logits[b] && c.ids[a] < c.ids[b]);
  });
  keep_in_order(c, c.order.size());
}

// Keeps every token whose logit is >= the k-th largest (so ties with it survive), sorted.
// Finding the k-th value is a linear selection over a plain copy of the logits; only the
// survivors are sorted.
void apply_top_k(Candidates& c, size_t k) {
  c.spare_logits.assign(c.logits.begin(), c.logits.end());
  const auto kth = c.spare_logits.begin() + static_cast<ptrdiff_t>(k - 1);
  std::nth_element(c.spare_logits.begin(), kth, c.spare_logits.end(), std::greater<float>());
  const float kth_logit = *kth;
  keep_if(c, [kth_logit](float l) { return l >= kth_logit; });
  sort_descending(c);
}

// Keeps the smallest set of most likely tokens whose mass reaches top_p (plus ties).
// Sorting the whole vocabulary every step is the expensive part, so only tokens with weight
// (p / p_max) >= threshold are sorted, as long as those alone reach the target mass: then
// the cut falls among them, and every token tied with the last survivor is among them too,
// so the result is exactly that of a full sort. Flat distributions lower the threshold.
void apply_top_p(Candidates& c, float top_p, float max_logit, bool sorted) {
  const size_t n = c.ids.size();
  c.probs.resize(n);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    c.probs[i] = std::exp(c.logits[i] - max_logit);  // float exp: the hot loop
    total += c.probs[i];
  }
  const double target = static_cast<double>(top_p) * total;
  c.order.resize(n);
  size_t count = n;
  for (size_t i = 0; i < n; ++i) c.order[i] = static_cast<uint32_t>(i);
  if (!sorted) {
    for (double threshold = 1e-4; threshold > 1e-30; threshold *= 1e-4) {
      double mass = 0.0;
      for (size_t i = 0; i < n; ++i) {
        if (c.probs[i] >= threshold) mass += c.probs[i];
      }
      // The margin covers summing in id order here and in sorted order below.
      if (mass >= target * (1.0 + 1e-9)) {
        count = 0;
        for (size_t i = 0; i < n; ++i) {
          if (c.probs[i] >= threshold) c.order[count++] = static_cast<uint32_t>(i);
        }
        break;
      }
    }
    // Equal logits have equal weights, so this orders by weight too.
    std::sort(c.order.begin(), c.order.begin() + static_cast<ptrdiff_t>(count),
              [&c](uint32_t a, uint32_t b) {
                return c.logits[a] > c.logits[b] ||
                       (c.logits[a] == c.logits[b] && c.ids[a] < c.ids[b]);
              });
  }
  // A token survives while the mass strictly before it is below top_p.
  double before = 0.0;
  size_t keep = 0;
  while (keep < count && (keep == 0 || before < target)) before += c.probs[c.order[keep++]];
  while (keep < count && c.logits[c.order[keep]] == c.logits[c.order[keep - 1]]) ++keep;
  keep_in_order(c, keep);
}

}  // namespace

void Candidates::clear() {
  ids.clear();
  logits.clear();
  probs.clear();
}

void filter_candidates(std::span<const float> logits, const SamplingParams& params,
                       Candidates& out) {
  out.clear();
  const bool greedy = params.is_greedy();
  const float temperature = greedy ? 1.0f : params.effective_temperature();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!(logits[i] > -kInf)) continue;  // -inf and NaN
    out.ids.push_back(static_cast<int32_t>(i));
    out.logits.push_back(logits[i] / temperature);
  }
  if (out.ids.empty()) fail("sampler: no token left to sample (every logit is -inf or NaN)");
  float max_logit = *std::max_element(out.logits.begin(), out.logits.end());
  if (max_logit == kInf) {
    // exp(inf - inf) is NaN: the +inf tokens take all the mass, shared equally.
    keep_if(out, [](float l) { return l == kInf; });
    std::fill(out.logits.begin(), out.logits.end(), 0.0f);
    max_logit = 0.0f;
  }

  if (!greedy) {
    if (params.min_p > 0.0f) {
      // p / p_max >= min_p, with p / p_max = exp(l - l_max): no normalizer needed.
      const float min_p = params.min_p;
      keep_if(out, [&](float l) { return std::exp(l - max_logit) >= min_p; });
    }
    bool sorted = false;
    if (params.top_k_enabled() && static_cast<size_t>(params.top_k) < out.ids.size()) {
      apply_top_k(out, static_cast<size_t>(params.top_k));
      sorted = true;
    }
    if (params.top_p < 1.0f) apply_top_p(out, params.top_p, max_logit, sorted);
  }

  out.probs.resize(out.ids.size());
  double total = 0.0;
  for (size_t i = 0; i < out.ids.size(); ++i) {
    out.probs[i] = std::exp(out.logits[i] - max_logit);  // float exp, summed in double
    total += out.probs[i];
  }
  for (double& p : out.probs) p /= total;
}

int32_t argmax_token(std::span<const float> logits) {
  int32_t best = -1;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!(logits[i] > -kInf)) continue;
    if (best < 0 || logits[i] > logits[best]) best = static_cast<int32_t>(i);
  }
  if (best < 0) fail("sampler: no token left to sample (every logit is -inf or NaN)");
  return best;
}

}  // namespace pagoda
