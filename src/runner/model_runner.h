// The model runner: applies each SchedulerOutput diff to a persistent batch, runs one
// forward pass over the flattened mix of prefill chunks and decodes, and samples the rows
// that reached the end of their tokens. It never sees a Request (DESIGN.md).
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "model/kv_cache.h"
#include "model/model.h"
#include "runner/prompt_logprobs.h"
#include "sample/sampler.h"
#include "sched/scheduler_output.h"

namespace pagoda {

// What the runner needs to know about a request beyond the scheduler's diff: given for
// new requests and for requests resumed after preemption.
struct RunnerRequestSetup {
  SamplingParams params;
  int num_prompt_tokens = 0;  // resumed requests come back as prompt + outputs
  uint64_t rng_key = 0;       // the request's Rng stream (Rng::key)
};
using RunnerSetupFn = std::function<RunnerRequestSetup(const RequestId&)>;

struct RunnerOutput {
  SampledTokens sampled;
  std::unordered_map<RequestId, std::vector<TokenLogprobs>> logprobs;  // when asked
  // For requests with prompt_logprobs: the prompt tokens this step's chunk scored. A
  // request resumed after preemption scores its prompt again; readers keep the first.
  std::unordered_map<RequestId, PromptLogprobsChunk> prompt_logprobs;
};

class ModelRunner {
 public:
  ModelRunner(Model& model, Backend& backend, int num_kv_blocks, int block_size);

  // Throws Error when the diff contradicts the runner's state.
  [[nodiscard]] RunnerOutput execute(const SchedulerOutput& out, const RunnerSetupFn& setup);

  [[nodiscard]] int num_requests() const { return static_cast<int>(states_.size()); }
  [[nodiscard]] bool has_request(const RequestId& id) const { return states_.count(id) > 0; }
  [[nodiscard]] KvCache& kv_cache() { return cache_; }

 private:
  struct State {
    std::vector<int32_t> token_ids;  // prompt then outputs
    int num_prompt_tokens = 0;
    std::vector<int32_t> block_ids;
    int num_computed_tokens = 0;
    SamplingParams params;
    Rng rng;
  };
  void apply(const SchedulerOutput& out, const RunnerSetupFn& setup);
  static State make_state(RunnerRequestSetup s, std::vector<int32_t> tokens,
                          std::vector<int32_t> blocks, int num_computed);

  Model& model_;
  Backend& backend_;
  KvCache cache_;
  std::unordered_map<RequestId, State> states_;
  Sampler sampler_;
  std::vector<float> logits_host_;
  std::vector<float> prompt_scratch_;
  std::vector<uint32_t> prompt_order_;
};

}  // namespace pagoda
