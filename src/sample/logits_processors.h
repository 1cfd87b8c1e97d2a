// The logit edits that run before temperature, in vLLM v1's order: allowed_token_ids,
// bad_words, min_tokens, logit_bias, then penalties (repetition, frequency, presence).
// Each works in place on one row of float logits; masked tokens become -inf.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "sample/sampling_params.h"

namespace pagoda {

// Vocabulary-sized scratch reused across rows and steps, so no processor allocates per step.
// Every processor leaves it zeroed again (it clears only what it touched).
struct ProcessorScratch {
  std::vector<uint8_t> marks;
  std::vector<int32_t> counts;
  std::vector<int32_t> edit_slots;  // append_logit_edits: 1 + a token's edit index, or 0
  void reserve(size_t vocab);
};

// Token histories come from the engine, but a bad id must never index out of the row:
// throws Error naming `what` for an id outside [0, vocab).
void check_ids(std::span<const int32_t> ids, size_t vocab, const char* what);

void apply_allowed_token_ids(std::span<float> logits, std::span<const int32_t> allowed,
                             ProcessorScratch& scratch);
// A sequence of one token is banned always; a longer one bans its last token when the output
// so far ends with the rest (vLLM looks at output tokens only, not the prompt).
// Whether bad word `word` bans its last token after output_ids (the rule above).
[[nodiscard]] bool bad_word_applies(std::span<const int32_t> word, std::span<const int32_t> output_ids);
void apply_bad_words(std::span<float> logits,
                     std::span<const std::vector<int32_t>> bad_words_token_ids,
                     std::span<const int32_t> output_ids);
// Until min_tokens tokens are out, no stop_token_ids and no EOS can be sampled.
void apply_min_tokens(std::span<float> logits, const SamplingParams& params,
                      size_t num_output_tokens);
void apply_logit_bias(std::span<float> logits, const std::map<int32_t, float>& logit_bias);
// repetition_penalty over prompt + output: positive logits are divided by it, the others
// multiplied (CTRL / HF / vLLM). Then, over output tokens only (OpenAI / vLLM):
// logit -= frequency_penalty * count + presence_penalty * (count > 0).
void apply_penalties(std::span<float> logits, const SamplingParams& params,
                     std::span<const int32_t> prompt_ids, std::span<const int32_t> output_ids,
                     ProcessorScratch& scratch);

// Whether any of the above would change a row with these params after num_output_tokens
// outputs (false: the row's logits are the model's own, so a device sampler may take it).
[[nodiscard]] bool logits_processors_act(const SamplingParams& params, size_t num_output_tokens);

// All of the above in order, skipping those the params leave off.
void apply_logits_processors(std::span<float> logits, const SamplingParams& params,
                             std::span<const int32_t> prompt_ids,
                             std::span<const int32_t> output_ids, ProcessorScratch& scratch);

}  // namespace pagoda
