// A row's logits processors as a short list of per-token edits (sample/logit_edit.h), so
// that a device sampler can apply them where the logits are instead of the host receiving
// the row: bad_words, min_tokens, logit_bias and the three penalties touch only the tokens
// they name. allowed_token_ids touches every other token, so it stays on the host.
#pragma once

#include <span>
#include <vector>

#include "sample/logit_edit.h"
#include "sample/logits_processors.h"
#include "sample/sampling_params.h"

namespace pagoda {

// Whether every processor these params turn on can be written as edits.
[[nodiscard]] bool processors_are_edits(const SamplingParams& params);

[[nodiscard]] RowPenalties row_penalties(const SamplingParams& params);

// Appends the row's edits, at most one per token, to edits; what they do to a row of vocab
// logits is what apply_logits_processors does (processors_are_edits must hold). Throws
// Error, as the processors do, on a token id outside the vocabulary.
void append_logit_edits(const SamplingParams& params, std::span<const int32_t> prompt_ids,
                        std::span<const int32_t> output_ids, size_t vocab, ProcessorScratch& scratch,
                        std::vector<LogitEdit>& edits);

// The host's application of a row's edits: each logit in float, in the processors' order
// and with their roundings (a device applies the same arithmetic).
void apply_logit_edits(std::span<float> logits, std::span<const LogitEdit> edits, const RowPenalties& penalties);

}  // namespace pagoda
