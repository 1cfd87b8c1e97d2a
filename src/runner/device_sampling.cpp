#include "runner/device_sampling.h"

namespace pagoda {

bool device_can_sample(const SamplingParams& params) {
  const bool logprobs_fit = !params.logprobs || (*params.logprobs >= 0 && *params.logprobs <= kMaxDeviceLogprobs);
  return logprobs_fit && processors_are_edits(params);
}

bool device_can_sample_ahead(const SamplingParams& params) {
  const bool penalties = params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f ||
                         params.repetition_penalty != 1.0f;
  return device_can_sample(params) && !params.logprobs && !penalties && params.bad_words_token_ids.empty();
}

SampleRowSpec device_sample_spec(int32_t logit_row, const SamplingParams& params, const RowHistory& history,
                                 size_t vocab, Rng& rng, ProcessorScratch& scratch, std::vector<LogitEdit>& edits) {
  SampleRowSpec spec;
  spec.logit_row = logit_row;
  spec.edits_begin = static_cast<int32_t>(edits.size());
  if (logits_processors_act(params, history.output_ids.size())) {
    append_logit_edits(params, history.prompt_ids, history.output_ids, vocab, scratch, edits);
  }
  spec.edits_end = static_cast<int32_t>(edits.size());
  spec.penalties = row_penalties(params);
  if (params.logprobs) spec.num_logprobs = *params.logprobs;
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

TokenLogprobs token_logprobs(const DeviceLogprobs& logprobs, int32_t token) {
  TokenLogprobs out;
  out.sampled = {token, logprobs.sampled_logprob, logprobs.sampled_rank};
  out.top.reserve(static_cast<size_t>(logprobs.num_top));
  for (int i = 0; i < logprobs.num_top; ++i) out.top.push_back({logprobs.top_ids[i], logprobs.top_logprobs[i], i + 1});
  return out;
}

}  // namespace pagoda
