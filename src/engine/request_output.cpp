#include "engine/request_output.h"

namespace pagoda {

const char* to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Abort: return "abort";
  }
  return "?";
}

void RequestOutput::merge(RequestOutput&& later) {
  text += later.text;
  token_ids.insert(token_ids.end(), later.token_ids.begin(), later.token_ids.end());
  for (auto& l : later.logprobs) logprobs.push_back(std::move(l));
  finished = finished || later.finished;
  if (later.finish_reason) finish_reason = later.finish_reason;
  if (!later.stop_reason.empty()) stop_reason = std::move(later.stop_reason);
  if (!queue_time_s) queue_time_s = later.queue_time_s;
  if (prompt_logprobs.empty()) prompt_logprobs = std::move(later.prompt_logprobs);
}

}  // namespace pagoda
