// The lifecycle of a request inside the scheduler: waiting -> running, back to preempted
// (waiting again, computed KV dropped) under memory pressure, and one of three ends.
#pragma once

#include <string_view>

namespace pagoda {

enum class RequestStatus {
  Waiting,
  Running,
  Preempted,
  FinishedStopped,       // sampled one of the request's stop token ids
  FinishedLengthCapped,  // hit max_tokens or max_model_len
  FinishedAborted,       // cancelled by the caller
};

[[nodiscard]] constexpr bool is_finished(RequestStatus s) {
  return s == RequestStatus::FinishedStopped || s == RequestStatus::FinishedLengthCapped ||
         s == RequestStatus::FinishedAborted;
}

[[nodiscard]] std::string_view to_string(RequestStatus s);

}  // namespace pagoda
