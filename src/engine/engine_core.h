// The engine core: one step = schedule -> run the model -> update the scheduler ->
// process outputs (detokenize, stop strings). Single-threaded; LLMEngine puts it on its
// own thread, LLM drives it directly.
//
// With async scheduling (EngineOptions::async_scheduling) a step schedules and launches
// step N+1 first, then collects step N and updates and processes it while N+1 computes: the
// host's work between steps no longer leaves the GPU idle. Requests that sampled in N have
// a placeholder for that token in N+1 (the device reads the id where it sampled it); one
// that finishes in N (a stop token or string, an abort) has computed one token too many,
// which is dropped. A request id is reusable only once no step in flight computes it.
#pragma once

#include <deque>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/engine_options.h"
#include "engine/output_processor.h"
#include "engine/parallel_sampling.h"
#include "runner/model_runner.h"
#include "sched/scheduler.h"

namespace pagoda {

// Wall time spent in each part of step(), summed over steps: where an offline run's time
// goes (bench throughput reports it). The runner splits its share further (RunnerTimes).
struct EngineStepTimes {
  double schedule_s = 0;  // scheduler_->schedule()
  double execute_s = 0;   // the runner: batch, forward pass, sampling
  double update_s = 0;    // scheduler_->update_from_output() and output processing
  int64_t num_steps = 0;
};

class EngineCore {
 public:
  // model, backend and tokenizer must outlive the core.
  EngineCore(Model& model, Backend& backend, const Tokenizer& tokenizer, const EngineOptions& options);

  // Validates a request and completes its params (EOS ids, tokenized bad words). Reads
  // only what is fixed at construction, so any thread may call it while the core runs;
  // throws Error on a request the core would refuse (an id in use is checked only by
  // add_request).
  [[nodiscard]] SamplingParams prepare(const RequestId& id, const std::vector<int32_t>& prompt_ids,
                                       SamplingParams params) const;
  // Validates first (prepare): on Error nothing is queued.
  void add_request(const RequestId& id, std::vector<int32_t> prompt_ids, SamplingParams params);
  // add_request for params that came out of prepare(). A request with n > 1 runs as n
  // child requests (parallel_sampling.h) whose deltas come back under its id, index = i.
  void add_prepared_request(const RequestId& id, std::vector<int32_t> prompt_ids, SamplingParams params);
  // Ends a request wherever it is (all of its choices); its final outputs (reason Abort)
  // come with the next step(). Unknown or finished ids are ignored.
  void abort(const RequestId& id);
  // One engine step; returns the deltas it produced.
  [[nodiscard]] std::vector<RequestOutput> step();
  // Also true while the runner still holds state that the next step will drop.
  [[nodiscard]] bool has_unfinished_requests() const;

  [[nodiscard]] const Scheduler& scheduler() const { return *scheduler_; }
  [[nodiscard]] const ModelRunner& runner() const { return *runner_; }
  [[nodiscard]] const OutputProcessor& output_processor() const { return processor_; }
  // Requests in the scheduler: each choice of an n > 1 request counts.
  [[nodiscard]] int num_requests() const { return static_cast<int>(setups_.size()); }
  [[nodiscard]] const ParallelSampling& parallel_sampling() const { return parallel_; }
  [[nodiscard]] const EngineStepTimes& step_times() const { return times_; }
  [[nodiscard]] const SchedulerConfig& config() const { return scheduler_->config(); }

 private:
  void add_one(const RequestId& id, std::vector<int32_t> prompt_ids, SamplingParams params,
               OutputProcessor::Clock::time_point arrival);
  void abort_one(const RequestId& id);
  [[nodiscard]] RunnerRequestSetup setup_of(const RequestId& id) const;
  [[nodiscard]] std::vector<RequestOutput> process(const RunnerOutput& run,
                                                   const std::vector<FinishedRequest>& finished);
  // Collects the oldest step in flight and updates and processes it.
  void finish_step(std::vector<RequestOutput>& outputs);

  const Tokenizer& tokenizer_;
  SamplingLimits limits_;
  std::vector<int32_t> eos_ids_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<ModelRunner> runner_;
  OutputProcessor processor_;
  ParallelSampling parallel_;
  std::unordered_map<RequestId, RunnerRequestSetup> setups_;  // live requests
  std::vector<RequestOutput> pending_;  // abort outputs for the next step
  bool async_ = false;
  std::deque<SchedulerOutput> in_flight_;  // launched, not collected (async: at most 2)
  EngineStepTimes times_;
};

}  // namespace pagoda
