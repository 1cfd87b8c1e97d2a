#include "sample/filters.h"

#include <algorithm>
#include <cmath>
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

void sort_descending(Candidates& c, size_t count_needed) {
  c.order.resize(c.ids.size());
  for (size_t i = 0; i < c.order.size(); ++i) c.order[i] = static_cast<uint32_t>(i);
  auto before = [&c](uint32_t a, uint32_t b) {
    return c.logits[a] > c.logits[b] || (c.logits[a] == c.logits[b] && c.ids[a] < c.ids[b]);
  };
  if (count_needed < c.order.size()) {
    // top_k: only the k largest need ordering; nth_element finds them in linear time.
    std::nth_element(c.order.begin(), c.order.begin() + static_cast<ptrdiff_t>(count_needed - 1),
                     c.order.end(), before);
    const float kth = c.logits[c.order[count_needed - 1]];
    // Ties with the k-th largest survive, wherever nth_element left them.
    size_t keep = count_needed;
    for (size_t i = count_needed; i < c.order.size(); ++i) {
      if (c.logits[c.order[i]] == kth) c.order[keep++] = c.order[i];
    }
    c.order.resize(keep);
  }
  std::sort(c.order.begin(), c.order.end(), before);
  keep_in_order(c, c.order.size());
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
      sort_descending(out, static_cast<size_t>(params.top_k));
      sorted = true;
    }
    if (params.top_p < 1.0f) {
      if (!sorted) sort_descending(out, out.ids.size());
      double total = 0.0;
      for (float l : out.logits) total += std::exp(static_cast<double>(l) - max_logit);
      const double target = static_cast<double>(params.top_p) * total;
      // A token survives while the mass strictly before it is below top_p.
      double before = 0.0;
      size_t keep = 0;
      while (keep < out.ids.size() && (keep == 0 || before < target)) {
        before += std::exp(static_cast<double>(out.logits[keep]) - max_logit);
        ++keep;
      }
      while (keep < out.ids.size() && out.logits[keep] == out.logits[keep - 1]) ++keep;
      out.ids.resize(keep);
      out.logits.resize(keep);
    }
  }

  out.probs.resize(out.ids.size());
  double total = 0.0;
  for (size_t i = 0; i < out.ids.size(); ++i) {
    out.probs[i] = std::exp(static_cast<double>(out.logits[i]) - max_logit);
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
