// Which rows the backend's device sampler may take (Backend::sample), and their specs. On
// the GPU this keeps a step's logits on the device: only the ids cross to the host, where
// a batch of 256 rows over a 128k vocabulary would otherwise download 131 MB per step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "sample/logit_edits.h"
#include "sample/logprobs.h"
#include "sample/rng.h"
#include "sample/sampling_params.h"

namespace pagoda {

// True when the row's logits processors are all logit edits (every one but
// allowed_token_ids) and it wants no logprobs or at most kMaxDeviceLogprobs top ones: then
// the device sampler computes what the host Sampler (LogprobsMode::kRaw) would (backend.h
// says how its draw differs).
[[nodiscard]] bool device_can_sample(const SamplingParams& params);

// The history a row's processors read.
struct RowHistory {
  std::span<const int32_t> prompt_ids;
  std::span<const int32_t> output_ids;
};

// True when a row may be sampled while the token before it is still on the device (async
// scheduling): the device samples it, it wants no logprobs, and no processor reads the
// values of its earlier tokens (penalties count them, bad words match them). min_tokens
// reads only how many there are.
[[nodiscard]] bool device_can_sample_ahead(const SamplingParams& params);

// The spec of such a row; its processors are appended to edits as logit edits (vocab: the
// logits' width). A non-greedy row draws its uniform from rng now, once, as the host Sampler
// would: a row the device hands back (id -1) must restore rng before the host samples it,
// so that its stream advances once per token either way.
[[nodiscard]] SampleRowSpec device_sample_spec(int32_t logit_row, const SamplingParams& params, const RowHistory& history,
                                               size_t vocab, Rng& rng, ProcessorScratch& scratch,
                                               std::vector<LogitEdit>& edits);

// The host Sampler's form of a row's device logprobs, sampled token `token`.
[[nodiscard]] TokenLogprobs token_logprobs(const DeviceLogprobs& logprobs, int32_t token);

}  // namespace pagoda
