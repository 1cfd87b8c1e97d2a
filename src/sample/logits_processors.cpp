#include "sample/logits_processors.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace pagoda {
namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();

}  // namespace

void check_ids(std::span<const int32_t> ids, size_t vocab, const char* what) {
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= vocab) {
      fail("sampler: ", what, " token id ", id, " is outside the vocabulary (", vocab, ")");
    }
  }
}

void ProcessorScratch::reserve(size_t vocab) {
  if (marks.size() < vocab) marks.assign(vocab, 0);
  if (counts.size() < vocab) counts.assign(vocab, 0);
  if (edit_slots.size() < vocab) edit_slots.assign(vocab, 0);
}

void apply_allowed_token_ids(std::span<float> logits, std::span<const int32_t> allowed,
                             ProcessorScratch& scratch) {
  scratch.reserve(logits.size());
  check_ids(allowed, logits.size(), "allowed");
  for (int32_t id : allowed) scratch.marks[id] = 1;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!scratch.marks[i]) logits[i] = kMasked;
  }
  for (int32_t id : allowed) scratch.marks[id] = 0;
}

bool bad_word_applies(std::span<const int32_t> word, std::span<const int32_t> output_ids) {
  if (word.empty() || word.size() > output_ids.size() + 1) return false;
  const size_t prefix = word.size() - 1;
  return std::equal(word.begin(), word.begin() + static_cast<ptrdiff_t>(prefix),
                    output_ids.end() - static_cast<ptrdiff_t>(prefix));
}

void apply_bad_words(std::span<float> logits,
                     std::span<const std::vector<int32_t>> bad_words_token_ids,
                     std::span<const int32_t> output_ids) {
  for (const std::vector<int32_t>& word : bad_words_token_ids) {
    if (!bad_word_applies(word, output_ids)) continue;
    const int32_t last = word.back();
    check_ids({&last, 1}, logits.size(), "bad_words");
    logits[last] = kMasked;
  }
}

void apply_min_tokens(std::span<float> logits, const SamplingParams& params,
                      size_t num_output_tokens) {
  if (params.min_tokens <= 0 || num_output_tokens >= static_cast<size_t>(params.min_tokens)) {
    return;
  }
  check_ids(params.stop_token_ids, logits.size(), "stop");
  check_ids(params.eos_token_ids, logits.size(), "eos");
  for (int32_t id : params.stop_token_ids) logits[id] = kMasked;
  for (int32_t id : params.eos_token_ids) logits[id] = kMasked;
}

void apply_logit_bias(std::span<float> logits, const std::map<int32_t, float>& logit_bias) {
  for (const auto& [id, bias] : logit_bias) {
    check_ids({&id, 1}, logits.size(), "logit_bias");
    logits[id] += std::clamp(bias, -kMaxLogitBias, kMaxLogitBias);
  }
}

void apply_penalties(std::span<float> logits, const SamplingParams& params,
                     std::span<const int32_t> prompt_ids, std::span<const int32_t> output_ids,
                     ProcessorScratch& scratch) {
  scratch.reserve(logits.size());
  check_ids(prompt_ids, logits.size(), "prompt");
  check_ids(output_ids, logits.size(), "output");
  if (params.repetition_penalty != 1.0f) {
    const float penalty = params.repetition_penalty;
    // Mark first, then penalize each marked token once, however often it occurs.
    auto penalize = [&](std::span<const int32_t> ids) {
      for (int32_t id : ids) {
        if (scratch.marks[id]) continue;
        scratch.marks[id] = 1;
        logits[id] = logits[id] > 0.0f ? logits[id] / penalty : logits[id] * penalty;
      }
    };
    penalize(prompt_ids);
    penalize(output_ids);
    for (int32_t id : prompt_ids) scratch.marks[id] = 0;
    for (int32_t id : output_ids) scratch.marks[id] = 0;
  }
  if (params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f) {
    for (int32_t id : output_ids) ++scratch.counts[id];
    for (int32_t id : output_ids) {
      const int32_t count = scratch.counts[id];
      if (count == 0) continue;  // already applied for this id
      // Two subtractions, in vLLM's order, so rounding matches it.
      logits[id] -= params.frequency_penalty * static_cast<float>(count);
      logits[id] -= params.presence_penalty;
      scratch.counts[id] = 0;
    }
  }
}

bool logits_processors_act(const SamplingParams& params, size_t num_output_tokens) {
  const bool min_tokens = params.min_tokens > 0 &&
                          num_output_tokens < static_cast<size_t>(params.min_tokens) &&
                          !(params.stop_token_ids.empty() && params.eos_token_ids.empty());
  return params.allowed_token_ids.has_value() || !params.bad_words_token_ids.empty() ||
         min_tokens || !params.logit_bias.empty() || params.repetition_penalty != 1.0f ||
         params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f;
}

void apply_logits_processors(std::span<float> logits, const SamplingParams& params,
                             std::span<const int32_t> prompt_ids,
                             std::span<const int32_t> output_ids, ProcessorScratch& scratch) {
  if (params.allowed_token_ids) apply_allowed_token_ids(logits, *params.allowed_token_ids, scratch);
  if (!params.bad_words_token_ids.empty()) {
    apply_bad_words(logits, params.bad_words_token_ids, output_ids);
  }
  apply_min_tokens(logits, params, output_ids.size());
  if (!params.logit_bias.empty()) apply_logit_bias(logits, params.logit_bias);
  const bool penalties = params.repetition_penalty != 1.0f || params.frequency_penalty != 0.0f ||
                         params.presence_penalty != 0.0f;
  if (penalties) apply_penalties(logits, params, prompt_ids, output_ids, scratch);
}

}  // namespace pagoda
