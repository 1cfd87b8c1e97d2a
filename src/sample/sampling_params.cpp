#include "sample/sampling_params.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace pagoda {
namespace {

void check_token_id(int64_t id, const SamplingLimits& limits, const char* field) {
  if (id < 0 || id >= limits.vocab_size) {
    fail(field, " contains out-of-vocab token id ", id, "; the vocabulary size is ",
         limits.vocab_size, ".");
  }
}

void check_logprobs(const std::optional<int>& value, const SamplingLimits& limits,
                    const char* field) {
  if (!value) return;
  if (*value < -1) fail(field, " must be non-negative or -1, got ", *value, ".");
  const int64_t requested = *value == -1 ? limits.vocab_size : *value;
  if (limits.max_logprobs >= 0 && requested > limits.max_logprobs) {
    fail("Requested ", field, " (", requested, ") exceeds the maximum allowed value of ",
         limits.max_logprobs, ".");
  }
}

}  // namespace

void SamplingParams::validate(const SamplingLimits& limits) const {
  if (limits.vocab_size <= 0) fail("sampling: the vocabulary size is not set");
  if (n < 1) fail("n must be at least 1, got ", n, ".");
  if (n > limits.max_n) fail("n must be at most ", limits.max_n, ", got ", n, ".");
  // !(a <= x && x <= b) rather than (x < a || x > b): NaN fails every range check.
  if (!(-2.0f <= presence_penalty && presence_penalty <= 2.0f)) {
    fail("presence_penalty must be in [-2, 2], got ", presence_penalty, ".");
  }
  if (!(-2.0f <= frequency_penalty && frequency_penalty <= 2.0f)) {
    fail("frequency_penalty must be in [-2, 2], got ", frequency_penalty, ".");
  }
  if (!std::isfinite(repetition_penalty)) {
    fail("repetition_penalty must be a finite number, got ", repetition_penalty, ".");
  }
  if (repetition_penalty <= 0.0f) {
    fail("repetition_penalty must be greater than zero, got ", repetition_penalty, ".");
  }
  if (!std::isfinite(temperature)) {
    fail("temperature must be a finite number, got ", temperature, ".");
  }
  if (temperature < 0.0f) fail("temperature must be non-negative, got ", temperature, ".");
  if (temperature > 2.0f) fail("temperature must be in [0, 2], got ", temperature, ".");
  if (!(0.0f < top_p && top_p <= 1.0f)) fail("top_p must be in (0, 1], got ", top_p, ".");
  if (top_k < -1) fail("top_k must be 0 (disable), or at least 1, got ", top_k, ".");
  if (!(0.0f <= min_p && min_p <= 1.0f)) fail("min_p must be in [0, 1], got ", min_p, ".");
  if (is_greedy() && n > 1) fail("n must be 1 when using greedy sampling, got ", n, ".");

  if (max_tokens) {
    if (*max_tokens < 1) fail("max_tokens must be at least 1, got ", *max_tokens, ".");
    if (limits.max_tokens && *max_tokens > *limits.max_tokens) {
      fail("max_tokens must be at most ", *limits.max_tokens, ", got ", *max_tokens, ".");
    }
  }
  if (min_tokens < 0) {
    fail("min_tokens must be greater than or equal to 0, got ", min_tokens, ".");
  }
  if (max_tokens && min_tokens > *max_tokens) {
    fail("min_tokens must be less than or equal to max_tokens=", *max_tokens, ", got ",
         min_tokens, ".");
  }
  check_logprobs(logprobs, limits, "logprobs");
  check_logprobs(prompt_logprobs, limits, "prompt_logprobs");

  if (stop.size() > limits.max_stop) {
    fail("stop must contain at most ", limits.max_stop, " strings, got ", stop.size(), ".");
  }
  for (const std::string& s : stop) {
    if (s.empty()) fail("stop cannot contain an empty string.");
    if (s.size() > limits.max_stop_len) {
      fail("stop strings must be at most ", limits.max_stop_len, " bytes, got one of ",
           s.size(), ".");
    }
  }
  if (stop_token_ids.size() > limits.max_stop_token_ids) {
    fail("stop_token_ids must contain at most ", limits.max_stop_token_ids, " ids, got ",
         stop_token_ids.size(), ".");
  }
  for (int32_t id : stop_token_ids) check_token_id(id, limits, "stop_token_ids");
  for (int32_t id : eos_token_ids) check_token_id(id, limits, "eos_token_ids");

  if (logit_bias.size() > limits.max_logit_bias) {
    fail("logit_bias must contain at most ", limits.max_logit_bias, " entries, got ",
         logit_bias.size(), ".");
  }
  for (const auto& [id, bias] : logit_bias) {
    check_token_id(id, limits, "logit_bias");
    if (std::isnan(bias)) fail("logit_bias for token ", id, " is not a number.");
  }
  if (allowed_token_ids) {
    if (allowed_token_ids->empty()) fail("allowed_token_ids is not allowed to be empty.");
    if (allowed_token_ids->size() > static_cast<size_t>(limits.vocab_size)) {
      fail("allowed_token_ids has ", allowed_token_ids->size(),
           " entries, more than the vocabulary size ", limits.vocab_size, ".");
    }
    for (int32_t id : *allowed_token_ids) check_token_id(id, limits, "allowed_token_ids");
  }
  for (const std::string& word : bad_words) {
    if (word.empty()) fail("bad_words cannot contain an empty string.");
    if (word.size() > limits.max_stop_len) {
      fail("bad_words entries must be at most ", limits.max_stop_len, " bytes, got one of ",
           word.size(), ".");
    }
  }
  if (bad_words.size() > limits.max_bad_words) {
    fail("Too many bad words: ", bad_words.size(), ". The max number is ",
         limits.max_bad_words, ".");
  }
  if (bad_words_token_ids.size() > limits.max_bad_words) {
    fail("Too many bad words after tokenization: ", bad_words_token_ids.size(),
         ". The max number is ", limits.max_bad_words, ".");
  }
  for (const auto& seq : bad_words_token_ids) {
    if (seq.empty()) fail("bad_words entries must tokenize to at least one token.");
    for (int32_t id : seq) check_token_id(id, limits, "bad_words");
  }
}

void SamplingParams::tokenize_bad_words(const EncodeFn& encode, const SamplingLimits& limits) {
  bad_words_token_ids.clear();
  for (const std::string& word : bad_words) {
    const size_t first = word.find_first_not_of(" \t\n\r\f\v");
    const std::string_view stripped =
        first == std::string::npos ? std::string_view{} : std::string_view(word).substr(first);
    std::vector<int32_t> plain = stripped.empty() ? std::vector<int32_t>{} : encode(stripped);
    if (plain.empty()) fail("bad_words entries must tokenize to at least one token.");
    std::string spaced_text(1, ' ');
    spaced_text.append(stripped);
    std::vector<int32_t> spaced = encode(spaced_text);
    const bool keep_spaced = !spaced.empty() && spaced.size() == plain.size() &&
                             spaced.front() != plain.front();
    bad_words_token_ids.push_back(std::move(plain));
    if (keep_spaced) bad_words_token_ids.push_back(std::move(spaced));
    if (bad_words_token_ids.size() > limits.max_bad_words) {
      fail("Too many bad words after tokenization: ", bad_words_token_ids.size(),
           ". The max number is ", limits.max_bad_words, ".");
    }
  }
  for (const auto& seq : bad_words_token_ids) {
    for (int32_t id : seq) check_token_id(id, limits, "bad_words");
  }
}

}  // namespace pagoda
