// The host sampler: for each row of a batch, processed logits -> one token id (+ logprobs).
// Rows are independent: a row's result depends only on its logits, params, token history
// and its own Rng, never on the other rows, so batch composition cannot change a seeded
// request's output.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sample/filters.h"
#include "sample/logits_processors.h"
#include "sample/logprobs.h"
#include "sample/rng.h"
#include "sample/sampling_params.h"

namespace pagoda {

struct SamplerRow {
  std::span<float> logits;  // [vocab]; overwritten by the processors (pre-temperature)
  const SamplingParams* params = nullptr;
  std::span<const int32_t> prompt_ids;
  std::span<const int32_t> output_ids;  // generated so far
  Rng* rng = nullptr;                   // advanced once per non-greedy sample
  // The logits already carry the processors (a device applied the row's logit edits, then
  // handed the row back): they are not applied again. Only for rows without logprobs.
  bool processors_applied = false;
};

// Which distribution logprobs describe. kRaw is vLLM v1's default (logprobs_mode
// "raw_logprobs"): the model's own log_softmax, before any penalty, bias, mask or filter.
// kProcessed: the distribution actually sampled from (vLLM's "processed_logprobs"), where
// filtered tokens have -inf.
enum class LogprobsMode { kRaw, kProcessed };

struct SampleResult {
  int32_t token = -1;
  std::optional<TokenLogprobs> logprobs;  // when params.logprobs is set
};

// Holds vocabulary-sized scratch, so it is not thread-safe: one Sampler per thread. Rows
// are independent, so a batch can be split across threads, each with its own Sampler.
class Sampler {
 public:
  explicit Sampler(LogprobsMode mode = LogprobsMode::kRaw) : mode_(mode) {}

  // Order (vLLM v1): allowed_token_ids, bad_words, min_tokens, logit_bias, penalties; then
  // greedy argmax if temperature < kGreedyTemperature, else temperature, min_p, top_k,
  // top_p and one draw. The draw is an inverse-CDF walk over the survivors with one uniform
  // double from the row's Rng (vLLM instead races exponentials, argmax(p / Exp(1)); both
  // sample the same distribution, not the same tokens). Throws Error on a malformed row.
  [[nodiscard]] SampleResult sample(const SamplerRow& row);
  [[nodiscard]] std::vector<SampleResult> sample(std::span<const SamplerRow> rows);

 private:
  LogprobsMode mode_;
  ProcessorScratch processor_scratch_;
  Candidates candidates_;
  std::vector<float> logprobs_;
  std::vector<uint32_t> order_;
};

}  // namespace pagoda
