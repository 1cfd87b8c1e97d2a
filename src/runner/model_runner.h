// The model runner: applies each SchedulerOutput diff to a persistent batch, runs one
// forward pass over the flattened mix of prefill chunks and decodes, and samples the rows
// that reached the end of their tokens. It never sees a Request (DESIGN.md).
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "model/kv_cache.h"
#include "model/model.h"
#include "runner/decode_graphs.h"
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

// Wall time of execute()'s parts, summed over steps. On a GPU the forward pass only queues
// kernels; the wait for them falls in sample_s, so forward_s ~ sample_s + forward_s means the
// host cannot queue work as fast as the GPU runs it.
struct RunnerTimes {
  double prepare_s = 0;  // applying the diff, flattening the batch
  double forward_s = 0;  // model forward (on a GPU: queuing its kernels)
  double sample_s = 0;   // device sampling, downloads, host sampling and prompt logprobs
};

class ModelRunner {
 public:
  // graphs: the decode-graph ladder (none by default, and none on backends without graphs).
  ModelRunner(Model& model, Backend& backend, int num_kv_blocks, int block_size,
              const DecodeGraphOptions& graphs = {});

  // Throws Error when the diff contradicts the runner's state.
  [[nodiscard]] RunnerOutput execute(const SchedulerOutput& out, const RunnerSetupFn& setup);

  [[nodiscard]] int num_requests() const { return static_cast<int>(states_.size()); }
  [[nodiscard]] bool has_request(const RequestId& id) const { return states_.count(id) > 0; }
  [[nodiscard]] KvCache& kv_cache() { return cache_; }
  [[nodiscard]] const RunnerTimes& times() const { return times_; }
  // The batch sizes whose decode steps replay a graph (empty: every step runs eagerly).
  [[nodiscard]] std::vector<int> graph_sizes() const { return graphs_.sizes(); }

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
  // Fills tokens[i] (and logprobs[i] where the row asks) for the sampler rows the backend can
  // sample on its device; for a row it hands back, processed[i] says whether its logits
  // already carry its processors.
  void sample_on_device(const Tensor& logits, const std::vector<State*>& samplers, std::vector<int32_t>& tokens,
                        std::vector<std::optional<TokenLogprobs>>& logprobs, std::vector<uint8_t>& processed);
  static State make_state(RunnerRequestSetup s, std::vector<int32_t> tokens,
                          std::vector<int32_t> blocks, int num_computed);

  Model& model_;
  Backend& backend_;
  KvCache cache_;
  DecodeGraphs graphs_;  // after cache_, which it records
  std::unordered_map<RequestId, State> states_;
  Sampler sampler_;
  ProcessorScratch edit_scratch_;  // device_sample_spec's, reused across steps
  std::vector<LogitEdit> edits_;    // the step's device rows' logit edits
  std::vector<float> logits_host_;
  std::vector<float> prompt_scratch_;
  std::vector<uint32_t> prompt_order_;
  RunnerTimes times_;
};

}  // namespace pagoda
