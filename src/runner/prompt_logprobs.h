// Prompt logprobs (vLLM's prompt_logprobs): the logprob and rank of each prompt token given
// its prefix, plus the top-k alternatives, from the raw logits (no temperature, penalties or
// filters: vLLM scores prompts the same way). A prefill chunk scores the prompt tokens that
// follow its positions, so a chunked prefill delivers them chunk by chunk. Prompt token 0
// has no prefix and so no logprobs (vLLM's None).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sample/logprobs.h"

namespace pagoda {

struct PromptLogprobsChunk {
  int first_token = 0;                // prompt position that values[0] scores (>= 1)
  std::vector<TokenLogprobs> values;  // one per prompt token from first_token on
};

// The positions of a chunk [start, start + num_new) whose logits score a prompt token
// (position j scores token j + 1, which must lie inside the prompt), as [begin, end).
struct PositionRange {
  int begin = 0;
  int end = 0;
  [[nodiscard]] int size() const { return end - begin; }
};
[[nodiscard]] PositionRange prompt_scoring_positions(int start, int num_new, int num_prompt_tokens);

// Scores prompt tokens first_token .. first_token + rows - 1 from `rows` consecutive logit
// rows of `vocab` floats (the logits of positions first_token - 1 ...). num_top = -1 returns
// the whole vocabulary. scratch and order are reused between calls.
[[nodiscard]] PromptLogprobsChunk score_prompt_tokens(std::span<const float> logits, size_t vocab,
                                                      std::span<const int32_t> prompt,
                                                      int first_token, int num_top,
                                                      std::vector<float>& scratch,
                                                      std::vector<uint32_t>& order);

}  // namespace pagoda
