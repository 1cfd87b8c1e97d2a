// Log-probabilities returned with samples (OpenAI "logprobs"): the chosen token's logprob
// and rank plus the top-n tokens. Also used for prompt_logprobs over prompt positions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pagoda {

struct TokenLogprob {
  int32_t token = -1;
  float logprob = 0.0f;
  int64_t rank = 0;  // 1 = most likely
};

struct TokenLogprobs {
  TokenLogprob sampled;
  std::vector<TokenLogprob> top;  // by descending logprob, ties by ascending id; ranks 1..n
};

// out[i] = logits[i] - logsumexp(logits), the sum in double. NaN logits count as -inf.
void log_softmax(std::span<const float> logits, std::span<float> out);

// The sampled token's rank follows vLLM: the number of tokens whose logprob is >= its own,
// so a token tied with others gets the worst of their ranks. num_top = -1 returns the whole
// vocabulary. order is scratch.
[[nodiscard]] TokenLogprobs gather_logprobs(std::span<const float> logprobs, int32_t token,
                                            int num_top, std::vector<uint32_t>& order);

}  // namespace pagoda
