#include "runner/prompt_logprobs.h"

#include <algorithm>

#include "core/error.h"

namespace pagoda {

PositionRange prompt_scoring_positions(int start, int num_new, int num_prompt_tokens) {
  const int end = std::min(start + num_new, num_prompt_tokens - 1);
  return {start, std::max(start, end)};
}

PromptLogprobsChunk score_prompt_tokens(std::span<const float> logits, size_t vocab,
                                        std::span<const int32_t> prompt, int first_token,
                                        int num_top, std::vector<float>& scratch,
                                        std::vector<uint32_t>& order) {
  PAGODA_CHECK(vocab > 0 && logits.size() % vocab == 0 && first_token >= 1);
  const size_t rows = logits.size() / vocab;
  PAGODA_CHECK(static_cast<size_t>(first_token) + rows <= prompt.size());
  PromptLogprobsChunk chunk;
  chunk.first_token = first_token;
  chunk.values.reserve(rows);
  scratch.resize(vocab);
  for (size_t r = 0; r < rows; ++r) {
    log_softmax(logits.subspan(r * vocab, vocab), scratch);
    const int32_t token = prompt[static_cast<size_t>(first_token) + r];
    chunk.values.push_back(gather_logprobs(scratch, token, num_top, order));
  }
  return chunk;
}

}  // namespace pagoda
