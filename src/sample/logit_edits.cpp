#include "sample/logit_edits.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace pagoda {

bool processors_are_edits(const SamplingParams& params) { return !params.allowed_token_ids.has_value(); }

RowPenalties row_penalties(const SamplingParams& params) {
  return {params.repetition_penalty, params.frequency_penalty, params.presence_penalty};
}

void append_logit_edits(const SamplingParams& params, std::span<const int32_t> prompt_ids,
                        std::span<const int32_t> output_ids, size_t vocab, ProcessorScratch& scratch,
                        std::vector<LogitEdit>& edits) {
  PAGODA_CHECK(processors_are_edits(params));
  const bool min_tokens = params.min_tokens > 0 && output_ids.size() < static_cast<size_t>(params.min_tokens);
  const bool repetition = params.repetition_penalty != 1.0f;
  const bool frequency_or_presence = params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f;
  // Every id is checked before the scratch is touched, so that a throw leaves it clean.
  for (const std::vector<int32_t>& word : params.bad_words_token_ids) {
    if (bad_word_applies(word, output_ids)) check_ids({&word.back(), 1}, vocab, "bad_words");
  }
  if (min_tokens) {
    check_ids(params.stop_token_ids, vocab, "stop");
    check_ids(params.eos_token_ids, vocab, "eos");
  }
  for (const auto& [t, bias] : params.logit_bias) check_ids({&t, 1}, vocab, "logit_bias");
  if (repetition || frequency_or_presence) {
    check_ids(prompt_ids, vocab, "prompt");
    check_ids(output_ids, vocab, "output");
  }

  scratch.reserve(vocab);
  const size_t first = edits.size();
  // The row's one edit of token t (scratch.edit_slots[t] - 1 indexes this row's edits).
  const auto edit_of = [&](int32_t t) -> LogitEdit& {
    int32_t& slot = scratch.edit_slots[static_cast<size_t>(t)];
    if (slot == 0) {
      edits.push_back(LogitEdit{.token = t});
      slot = static_cast<int32_t>(edits.size() - first);
    }
    return edits[first + static_cast<size_t>(slot) - 1];
  };
  for (const std::vector<int32_t>& word : params.bad_words_token_ids) {
    if (bad_word_applies(word, output_ids)) edit_of(word.back()).masked = 1;
  }
  if (min_tokens) {
    for (const int32_t t : params.stop_token_ids) edit_of(t).masked = 1;
    for (const int32_t t : params.eos_token_ids) edit_of(t).masked = 1;
  }
  for (const auto& [t, bias] : params.logit_bias) {
    LogitEdit& e = edit_of(t);
    e.has_bias = 1;
    e.bias = std::clamp(bias, -kMaxLogitBias, kMaxLogitBias);
  }
  if (repetition) {
    for (const int32_t t : prompt_ids) edit_of(t).repeated = 1;
    for (const int32_t t : output_ids) edit_of(t).repeated = 1;
  }
  if (frequency_or_presence) {
    for (const int32_t t : output_ids) ++edit_of(t).output_count;
  }
  for (size_t i = first; i < edits.size(); ++i) scratch.edit_slots[static_cast<size_t>(edits[i].token)] = 0;
}

void apply_logit_edits(std::span<float> logits, std::span<const LogitEdit> edits, const RowPenalties& penalties) {
  // This library builds with -ffp-contract=off: each step rounds on its own, as in the
  // processors and on the device.
  for (const LogitEdit& e : edits) {
    float l = logits[static_cast<size_t>(e.token)];
    if (e.masked) l = -std::numeric_limits<float>::infinity();
    if (e.has_bias) l += e.bias;
    if (e.repeated) l = l > 0.0f ? l / penalties.repetition : l * penalties.repetition;
    if (e.output_count > 0) {
      l -= penalties.frequency * static_cast<float>(e.output_count);
      l -= penalties.presence;
    }
    logits[static_cast<size_t>(e.token)] = l;
  }
}

}  // namespace pagoda
