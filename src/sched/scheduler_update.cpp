// Scheduler: taking the runner's results (update_from_output) and ending requests.
#include <algorithm>

#include "core/error.h"
#include "sched/scheduler.h"

namespace pagoda {

std::optional<RequestStatus> Scheduler::check_stop(const Request& r) const {
  if (r.is_stop_token(r.all_token_ids().back())) return RequestStatus::FinishedStopped;
  if (r.num_output_tokens() >= r.max_tokens() || r.num_tokens() >= config_.max_model_len) {
    return RequestStatus::FinishedLengthCapped;
  }
  return std::nullopt;
}

void Scheduler::finish(Request& r, RequestStatus status) {
  PAGODA_CHECK(is_finished(status));
  if (r.status == RequestStatus::Running) {
    running_.erase(std::find(running_.begin(), running_.end(), &r));
  } else {
    PAGODA_CHECK(waiting_->remove(&r));
  }
  r.status = status;
  const RequestId id = r.id();  // a copy: erasing destroys r
  kv_.free(id);
  finished_since_last_step_.push_back(id);
  requests_.erase(id);
}

std::vector<FinishedRequest> Scheduler::update_from_output(const SchedulerOutput& output,
                                                           const SampledTokens& sampled) {
  std::vector<FinishedRequest> finished;
  for (const auto& [id, num_scheduled] : output.num_scheduled_tokens) {
    const auto it = requests_.find(id);
    // Aborted (or finished and its id reused) since schedule(): nothing to update.
    if (it == requests_.end() || it->second->status != RequestStatus::Running) continue;
    Request& r = *it->second;
    const auto s = sampled.find(id);
    const bool has_tokens = s != sampled.end() && !s->second.empty();
    if (r.num_computed_tokens < r.num_tokens()) {
      // Mid-prefill: the runner's logits for a partial prompt are not a next token.
      if (has_tokens)
        fail("update_from_output: request ", id, " is mid-prefill but got sampled tokens");
      kv_.cache_full_blocks(r.kv_view(), r.num_computed_tokens);
      continue;
    }
    std::optional<RequestStatus> stop;
    if (has_tokens) {
      for (const TokenId t : s->second) {
        if (t < 0) fail("update_from_output: request ", id, " got negative token id ", t);
        r.append_output_token(t);
        if ((stop = check_stop(r))) break;
      }
    }
    // Only KV computed in this step is cached: not the freshly sampled token's.
    kv_.cache_full_blocks(r.kv_view(), r.num_computed_tokens);
    if (stop) {
      finished.push_back({id, *stop});
      finish(r, *stop);
    }
  }
  return finished;
}

void Scheduler::finish_requests(std::span<const RequestId> ids, RequestStatus status) {
  if (!is_finished(status))
    fail("finish_requests: ", to_string(status), " is not a finished status");
  for (const RequestId& id : ids) {
    const auto it = requests_.find(id);
    if (it == requests_.end()) continue;  // unknown or already finished: idempotent
    finish(*it->second, status);
  }
}

}  // namespace pagoda
