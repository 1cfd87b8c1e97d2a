// The filters that shape the distribution sampled from, after temperature, in vLLM v1's
// order: min_p, then top_k, then top_p. The result is the surviving tokens with their
// renormalized probabilities, which is exactly what the sampler draws from.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sample/sampling_params.h"

namespace pagoda {

struct Candidates {
  std::vector<int32_t> ids;     // surviving tokens
  std::vector<float> logits;    // their logits after temperature
  std::vector<double> probs;    // renormalized over the survivors; sums to 1
  // ids are in token-id order when neither top_k nor top_p cut anything; otherwise by
  // descending logit, ties by ascending id. Either way the order is a function of the row
  // alone, which keeps seeded sampling reproducible.
  // Scratch for the sorts, kept so that a step allocates nothing once warmed up.
  std::vector<uint32_t> order;
  std::vector<int32_t> spare_ids;
  std::vector<float> spare_logits;
  void clear();
};

// Tie rule, same for top_k and top_p: a token tied with the last survivor survives too.
// top_k matches vLLM and HF (both keep every logit >= the k-th largest). For top_p, vLLM
// and HF both sort ascending and cut where the ascending cumulative sum is <= 1 - top_p; at
// a tie on the boundary the sort order decides which of the tied tokens go. We keep them all,
// so the result never depends on a sort's tie order. Sums are in double, theirs in float:
// a token whose cumulative mass sits within float rounding of the boundary may differ.
//
// Non-finite logits: NaN and -inf never survive. Throws Error when no token is left (every
// logit masked or NaN), which only a broken model or contradictory masks can cause.
void filter_candidates(std::span<const float> logits, const SamplingParams& params,
                       Candidates& out);

// Index of the largest logit, lowest id on ties, NaN ignored (greedy decoding, like
// torch.argmax on the processed logits). Throws Error when no logit is a number above -inf.
[[nodiscard]] int32_t argmax_token(std::span<const float> logits);

}  // namespace pagoda
