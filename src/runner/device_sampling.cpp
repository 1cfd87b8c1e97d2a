#include "runner/device_sampling.h"

#include "sample/logits_processors.h"

namespace pagoda {

bool device_can_sample(const SamplingParams& params, size_t num_output_tokens) {
  return !params.logprobs.has_value() && !logits_processors_act(params, num_output_tokens);
}

SampleRowSpec device_sample_spec(int32_t logit_row, const SamplingParams& params, Rng& rng) {
  SampleRowSpec spec;
  spec.logit_row = logit_row;
  if (params.is_greedy()) {
    spec.greedy = 1;
    return spec;
  }
  spec.temperature = params.effective_temperature();
  spec.top_k = params.top_k_enabled() ? params.top_k : 0;
  spec.top_p = params.top_p;
  spec.min_p = params.min_p;
  spec.uniform = rng.next_double();
  return spec;
}

}  // namespace pagoda
