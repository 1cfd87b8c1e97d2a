#include "sample/sampler.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace pagoda {
namespace {

int32_t draw(const Candidates& c, Rng& rng) {
  const double u = rng.next_double();
  double cumulative = 0.0;
  for (size_t i = 0; i < c.ids.size(); ++i) {
    cumulative += c.probs[i];
    if (u < cumulative) return c.ids[i];
  }
  return c.ids.back();  // u within rounding of 1
}

}  // namespace

SampleResult Sampler::sample(const SamplerRow& row) {
  if (row.params == nullptr) fail("sampler: row without sampling params");
  if (row.logits.empty()) fail("sampler: row with empty logits");
  const SamplingParams& params = *row.params;
  const bool want_logprobs = params.logprobs.has_value();
  if (want_logprobs && mode_ == LogprobsMode::kRaw) {
    logprobs_.resize(row.logits.size());
    log_softmax(row.logits, logprobs_);
  }

  if (row.processors_applied && want_logprobs) fail("sampler: a row with logprobs must come unprocessed");
  if (!row.processors_applied) {
    apply_logits_processors(row.logits, params, row.prompt_ids, row.output_ids, processor_scratch_);
  }
  SampleResult result;
  const bool greedy = params.is_greedy();
  if (greedy) {
    result.token = argmax_token(row.logits);
  } else {
    if (row.rng == nullptr) fail("sampler: random sampling without an Rng");
    filter_candidates(row.logits, params, candidates_);
    result.token = draw(candidates_, *row.rng);
  }

  if (want_logprobs) {
    if (mode_ == LogprobsMode::kProcessed) {
      logprobs_.resize(row.logits.size());
      if (greedy) {
        log_softmax(row.logits, logprobs_);
      } else {
        std::fill(logprobs_.begin(), logprobs_.end(), -std::numeric_limits<float>::infinity());
        for (size_t i = 0; i < candidates_.ids.size(); ++i) {
          logprobs_[candidates_.ids[i]] = static_cast<float>(std::log(candidates_.probs[i]));
        }
      }
    }
    result.logprobs = gather_logprobs(logprobs_, result.token, *params.logprobs, order_);
  }
  return result;
}

std::vector<SampleResult> Sampler::sample(std::span<const SamplerRow> rows) {
  std::vector<SampleResult> results;
  results.reserve(rows.size());
  for (const SamplerRow& row : rows) results.push_back(sample(row));
  return results;
}

}  // namespace pagoda
