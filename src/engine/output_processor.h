// Turns sampled token ids into streamed text per request: incremental detokenization
// (io/incremental_detokenizer.h: text goes out once no later token can change it), stop
// strings (no text past a stop goes out), and finish reasons. Stop *tokens* and max_tokens
// are the scheduler's. It also puts the queue time and the prompt logprobs on a request's
// first delta.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/request_output.h"
#include "io/incremental_detokenizer.h"
#include "io/tokenizer.h"
#include "runner/prompt_logprobs.h"
#include "sample/sampling_params.h"
#include "sample/stop_checker.h"
#include "sched/request_status.h"

namespace pagoda {

class OutputProcessor {
 public:
  explicit OutputProcessor(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

  using Clock = std::chrono::steady_clock;

  // arrival: when the request reached the engine (its queue time starts there).
  void add_request(const RequestId& id, const SamplingParams& params, Clock::time_point arrival = Clock::now());
  // The scheduler ran the request for the first time; later calls change nothing.
  void mark_scheduled(const RequestId& id, Clock::time_point now = Clock::now());
  // Prompt tokens scored in a step. Positions already held (a preempted request scores
  // its prompt again) are skipped; unknown ids are ignored.
  void add_prompt_logprobs(const RequestId& id, const PromptLogprobsChunk& chunk);
  [[nodiscard]] bool has_request(const RequestId& id) const { return states_.count(id) > 0; }
  [[nodiscard]] int num_requests() const { return static_cast<int>(states_.size()); }

  // New tokens of a request; finished_status when the scheduler ended it with them.
  // Returns the delta (empty text and ids are possible). When a stop string ends the
  // request, the delta is final with reason Stop and the caller must finish it in the
  // scheduler. A finished request's state is dropped.
  [[nodiscard]] RequestOutput process(const RequestId& id, std::span<const int32_t> tokens,
                                      std::span<const TokenLogprobs> logprobs,
                                      std::optional<RequestStatus> finished_status);
  // The final delta of an aborted request (held-back text is dropped); drops its state.
  [[nodiscard]] RequestOutput abort(const RequestId& id);

 private:
  struct State {
    SamplingParams params;
    IncrementalDetokenizer detokenizer;
    std::string fed;   // stable text handed to the stop checker (or emitted before min_tokens)
    size_t emitted = 0;  // bytes of `fed` emitted
    size_t checker_base = 0;  // where the stop checker's text starts within `fed`
    std::unique_ptr<StopChecker> checker;  // made once min_tokens are out
    Clock::time_point arrival;
    std::optional<double> queue_time_s;   // set at the first scheduling
    bool first_delta_sent = false;        // queue time and prompt logprobs go on it
    std::vector<TokenLogprobs> prompt_logprobs;  // for prompt tokens 1, 2, ...
  };
  // Feeds newly certain text; returns true when a stop string fired.
  bool feed(State& st, std::string_view delta, RequestOutput& out);

  const Tokenizer& tokenizer_;
  std::unordered_map<RequestId, State> states_;
};

}  // namespace pagoda
