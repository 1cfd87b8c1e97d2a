// The model runner: applies each SchedulerOutput diff to a persistent batch, runs one
// forward pass over the flattened mix of prefill chunks and decodes, and samples the rows
// that reached the end of their tokens. It never sees a Request (DESIGN.md).
#pragma once

#include <deque>
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
  // Never sampled ahead (async): its device draw was handed back once (runner output's
  // recompute), so its logits must reach the host sampler.
  bool sample_synchronously = false;
};
using RunnerSetupFn = std::function<RunnerRequestSetup(const RequestId&)>;

struct RunnerOutput {
  SampledTokens sampled;
  std::unordered_map<RequestId, std::vector<TokenLogprobs>> logprobs;  // when asked
  // For requests with prompt_logprobs: the prompt tokens this step's chunk scored. A
  // request resumed after preemption scores its prompt again; readers keep the first.
  std::unordered_map<RequestId, PromptLogprobsChunk> prompt_logprobs;
  // Sampled ahead, but the device handed the row back and its logits are gone: the
  // scheduler recomputes these requests (Scheduler::recompute). Any token of theirs in the
  // step launched after this one is dropped.
  std::vector<RequestId> recompute;
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

  // Throws Error when the diff contradicts the runner's state. execute = launch + collect.
  [[nodiscard]] RunnerOutput execute(const SchedulerOutput& out, const RunnerSetupFn& setup);
  // Async scheduling: launch queues a step and returns; collect returns the oldest launched
  // step's output. A step launched with may_sample_ahead whose rows can all be sampled ahead
  // (device_can_sample_ahead, on a backend that can_sample_async) leaves its ids on the
  // device: its rows' next tokens are placeholders, which the step after it reads there, and
  // collect fills them in. Any other step is sampled (so waited for) within launch. At most
  // two steps may be in flight, and the older must be collected before a third is launched.
  void launch(const SchedulerOutput& out, const RunnerSetupFn& setup, bool may_sample_ahead = false);
  [[nodiscard]] RunnerOutput collect();
  [[nodiscard]] int num_in_flight() const { return static_cast<int>(in_flight_.size()); }

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
    bool sample_synchronously = false;
    uint64_t generation = 0;  // tells a request's state from a later one under its id
  };
  // A launched step. Its output is complete unless its ids are still on the device.
  struct InFlight {
    RunnerOutput output;
    bool on_device = false;
    struct Row {  // a row sampled ahead, in the backend's row order
      RequestId id;
      uint64_t generation;
      size_t token_index;  // of its placeholder in the state's token_ids
    };
    std::vector<Row> rows;
    std::vector<RequestId> dropped;  // handed back in the step before: their tokens here are void
  };
  // Requests with prompt_logprobs also want the logits of the positions that score their
  // prompt tokens; those rows follow the sampling rows in the logits.
  struct PromptRows {
    const RequestId* id;
    State* state;
    PositionRange positions;
    int32_t first_row;  // in the flattened batch
  };
  // The step's sampling within launch: fills result, appending the tokens to the states.
  void sample_now(const Tensor& logits, size_t num_logit_rows, const std::vector<State*>& samplers,
                  const std::vector<const RequestId*>& sampler_ids, const std::vector<PromptRows>& prompt_rows,
                  RunnerOutput& result);
  // The device sampler's spec of a state's row (its edits appended to edits_; draws from its rng).
  SampleRowSpec row_spec(size_t logit_row, State& st);
  // Samples ahead (async): the ids stay on the device, the states get placeholders.
  void sample_ahead(const Tensor& logits, const std::vector<State*>& samplers,
                    const std::vector<const RequestId*>& sampler_ids, InFlight& step);
  void apply(const SchedulerOutput& out, const RunnerSetupFn& setup);
  // Fills tokens[i] (and logprobs[i] where the row asks) for the sampler rows the backend can
  // sample on its device; for a row it hands back, processed[i] says whether its logits
  // already carry its processors.
  void sample_on_device(const Tensor& logits, const std::vector<State*>& samplers, std::vector<int32_t>& tokens,
                        std::vector<std::optional<TokenLogprobs>>& logprobs, std::vector<uint8_t>& processed);
  State make_state(RunnerRequestSetup s, std::vector<int32_t> tokens, std::vector<int32_t> blocks,
                   int num_computed);

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
  std::deque<InFlight> in_flight_;
  uint64_t next_generation_ = 0;
};

}  // namespace pagoda
