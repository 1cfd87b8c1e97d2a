#include "sample/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace pagoda {

void log_softmax(std::span<const float> logits, std::span<float> out) {
  PAGODA_CHECK(out.size() == logits.size());
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float max_logit = kNegInf;
  for (float l : logits) {
    if (l > max_logit) max_logit = l;
  }
  if (max_logit == kNegInf) {  // every token masked: nothing has any mass
    std::fill(out.begin(), out.end(), kNegInf);
    return;
  }
  if (std::isinf(max_logit)) {  // +inf logits take all the mass, shared equally
    size_t n = 0;
    for (float l : logits) n += l == max_logit;
    const float share = -std::log(static_cast<float>(n));
    for (size_t i = 0; i < logits.size(); ++i) out[i] = logits[i] == max_logit ? share : kNegInf;
    return;
  }
  double sum = 0.0;
  for (float l : logits) {
    if (l > kNegInf) sum += std::exp(static_cast<double>(l) - max_logit);
  }
  const double shift = static_cast<double>(max_logit) + std::log(sum);
  for (size_t i = 0; i < logits.size(); ++i) {
    out[i] = logits[i] > kNegInf ? static_cast<float>(logits[i] - shift) : kNegInf;
  }
}

TokenLogprobs gather_logprobs(std::span<const float> logprobs, int32_t token, int num_top,
                              std::vector<uint32_t>& order) {
  PAGODA_CHECK(token >= 0 && static_cast<size_t>(token) < logprobs.size());
  TokenLogprobs result;
  const float own = logprobs[token];
  int64_t rank = 0;
  for (float lp : logprobs) rank += lp >= own;
  result.sampled = {token, own, std::max<int64_t>(rank, 1)};  // NaN own: rank 1, not 0

  const size_t n = num_top < 0 ? logprobs.size()
                               : std::min(static_cast<size_t>(num_top), logprobs.size());
  if (n == 0) return result;
  order.resize(logprobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  // NaN sorts last so that the comparison stays a strict weak order.
  auto key = [&](uint32_t i) {
    const float lp = logprobs[i];
    return std::isnan(lp) ? -std::numeric_limits<float>::infinity() : lp;
  };
  auto before = [&](uint32_t a, uint32_t b) {
    const float ka = key(a), kb = key(b);
    return ka > kb || (ka == kb && a < b);
  };
  // Linear selection, then a sort of only the n chosen.
  const auto nth = order.begin() + static_cast<ptrdiff_t>(n);
  if (n < order.size()) std::nth_element(order.begin(), nth - 1, order.end(), before);
  std::sort(order.begin(), nth, before);
  result.top.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    result.top.push_back({static_cast<int32_t>(order[i]), logprobs[order[i]],
                          static_cast<int64_t>(i + 1)});
  }
  return result;
}

}  // namespace pagoda
