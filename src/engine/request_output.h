// What the engine streams back per request: deltas of text and token ids, and the finish
// reason once done. Deltas merge, so a slow reader can take several steps' worth at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sample/logprobs.h"
#include "sched/request.h"

namespace pagoda {

enum class FinishReason { Stop, Length, Abort };
[[nodiscard]] const char* to_string(FinishReason reason);

struct RequestOutput {
  RequestId id;
  int index = 0;  // which of the request's n choices this delta belongs to
  std::string text;                 // new text since the previous delta
  std::vector<int32_t> token_ids;   // new token ids since the previous delta
  std::vector<TokenLogprobs> logprobs;  // one per new token, when asked
  bool finished = false;
  std::optional<FinishReason> finish_reason;
  std::string stop_reason;  // the stop string that ended it, if one did
  // Seconds from add_request to the request's first scheduling, on the delta that carries
  // its first tokens (and so on the merged final one); unset before that.
  std::optional<double> queue_time_s;
  // With prompt_logprobs: one per prompt token from the second on (the first has no prefix
  // to be scored by: vLLM's None), on the delta that carries the first tokens of choice 0.
  std::vector<TokenLogprobs> prompt_logprobs;

  // Appends a later delta of the same request.
  void merge(RequestOutput&& later);
};

}  // namespace pagoda
