// Per-request sampling parameters, named and defaulted as in vLLM's SamplingParams (itself
// the OpenAI completions API), and their validation against the server's caps. The CPU
// sampler (sampler.h) and a future GPU sampler both read this one struct.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pagoda {

// Below this temperature a request is greedy (vLLM's _SAMPLING_EPS).
inline constexpr float kGreedyTemperature = 1e-5f;
// Temperatures in (0, kMinTemperature) are raised to it: dividing logits by a tinier value
// overflows float (vLLM's _MAX_TEMP, which warns and raises the same way).
inline constexpr float kMinTemperature = 1e-2f;
// OpenAI clamps logit_bias values to this range; so does vLLM.
inline constexpr float kMaxLogitBias = 100.0f;

// Server-wide caps. The defaults are deliberately modest: each is a cost the server pays per
// request (n sequences of KV cache, logprobs on every token, stop-string scanning).
struct SamplingLimits {
  int32_t vocab_size = 0;           // token ids must be in [0, vocab_size); required
  int max_n = 128;                  // OpenAI's own cap on n; vLLM's is 16384 (env)
  int max_logprobs = 20;            // vLLM's default --max-logprobs; -1 = no cap
  size_t max_stop = 64;             // number of stop strings
  size_t max_stop_len = 1024;       // bytes per stop string
  size_t max_stop_token_ids = 1024;
  size_t max_bad_words = 128;       // token sequences after tokenization (vLLM's default)
  size_t max_logit_bias = 1024;     // entries in logit_bias
  std::optional<int64_t> max_tokens;  // e.g. max_model_len; unset = no cap here
};

struct SamplingParams {
  int n = 1;
  float presence_penalty = 0.0f;   // [-2, 2], over output tokens
  float frequency_penalty = 0.0f;  // [-2, 2], over output tokens
  float repetition_penalty = 1.0f; // > 0, over prompt + output tokens (HF/CTRL style)
  float temperature = 1.0f;        // [0, 2]; < kGreedyTemperature is greedy
  float top_p = 1.0f;              // (0, 1]
  int32_t top_k = 0;               // 0 or -1: off
  float min_p = 0.0f;              // [0, 1]
  std::optional<int64_t> seed;     // vLLM maps seed -1 to "none"; the front end does too
  std::vector<std::string> stop;
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  std::optional<int64_t> max_tokens = 16;
  int64_t min_tokens = 0;
  std::optional<int> logprobs;         // -1: the whole vocabulary
  std::optional<int> prompt_logprobs;  // -1: the whole vocabulary
  bool skip_special_tokens = true;
  bool spaces_between_special_tokens = true;
  bool include_stop_str_in_output = false;
  // Applied clamped to [-kMaxLogitBias, kMaxLogitBias].
  std::map<int32_t, float> logit_bias;
  std::optional<std::vector<int32_t>> allowed_token_ids;
  std::vector<std::string> bad_words;

  // Filled by the engine, not by users. eos_token_ids are the model's end tokens; min_tokens
  // masks them along with stop_token_ids (vLLM's _all_stop_token_ids) even with ignore_eos.
  std::vector<int32_t> eos_token_ids;
  // bad_words after tokenization (tokenize_bad_words); the sampler reads only this.
  std::vector<std::vector<int32_t>> bad_words_token_ids;

  [[nodiscard]] bool is_greedy() const { return temperature < kGreedyTemperature; }
  // The temperature the sampler divides by when not greedy.
  [[nodiscard]] float effective_temperature() const {
    return temperature < kMinTemperature ? kMinTemperature : temperature;
  }
  [[nodiscard]] bool top_k_enabled() const { return top_k > 0; }

  // Throws Error naming the first bad field. Messages follow vLLM's wording.
  void validate(const SamplingLimits& limits) const;

  // vLLM's update_from_tokenizer: each bad word is encoded as written and with a leading
  // space (so it is banned mid-text too, for tokenizers that fold the space into the word);
  // the spaced form is kept only when it is a different same-length sequence. Throws Error
  // when a word encodes to nothing, there are too many sequences, or an id is out of vocab.
  using EncodeFn = std::function<std::vector<int32_t>(std::string_view)>;
  void tokenize_bad_words(const EncodeFn& encode, const SamplingLimits& limits);
};

}  // namespace pagoda
