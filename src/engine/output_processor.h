// Turns sampled token ids into streamed text per request: incremental detokenization
// (io/incremental_detokenizer.h: text goes out once no later token can change it), stop
// strings (no text past a stop goes out), and finish reasons. Stop *tokens* and max_tokens
// are the scheduler's.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/request_output.h"
#include "io/incremental_detokenizer.h"
#include "io/tokenizer.h"
#include "sample/sampling_params.h"
#include "sample/stop_checker.h"
#include "sched/request_status.h"

namespace pagoda {

class OutputProcessor {
 public:
  explicit OutputProcessor(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

  void add_request(const RequestId& id, const SamplingParams& params);
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
  };
  // Feeds newly certain text; returns true when a stop string fired.
  bool feed(State& st, std::string_view delta, RequestOutput& out);

  const Tokenizer& tokenizer_;
  std::unordered_map<RequestId, State> states_;
};

}  // namespace pagoda
