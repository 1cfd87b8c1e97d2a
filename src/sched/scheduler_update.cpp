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

std::optional<RequestStatus> Scheduler::take_sampled(Request& r, std::span<const TokenId> tokens) {
  std::optional<RequestStatus> stop;
  for (const TokenId t : tokens) {
    if (t < 0) fail("update_from_output: request ", r.id(), " got negative token id ", t);
    if (config_.async_scheduling) {
      if (r.num_output_placeholders == 0) fail("update_from_output: request ", r.id(), " got a token it was not scheduled to sample");
      --r.num_output_placeholders;
    }
    r.append_output_token(t);
    if ((stop = check_stop(r))) break;
  }
  return stop;
}

std::vector<FinishedRequest> Scheduler::update_from_output(const SchedulerOutput& output,
                                                           const SampledTokens& sampled) {
  std::vector<FinishedRequest> finished;
  for (const auto& [id, num_scheduled] : output.num_scheduled_tokens) {
    const auto it = requests_.find(id);
    // Aborted (or finished and its id reused) since schedule(): nothing to update.
    if (it == requests_.end()) continue;
    Request& r = *it->second;
    const auto s = sampled.find(id);
    const std::span<const TokenId> tokens =
        s == sampled.end() ? std::span<const TokenId>() : std::span<const TokenId>(s->second);
    if (r.status != RequestStatus::Running) {
      // Async: preempted by a schedule() after this step's; the token is still its next one.
      if (!config_.async_scheduling || r.status != RequestStatus::Preempted || tokens.empty()) continue;
      if (const std::optional<RequestStatus> stop = take_sampled(r, tokens)) {
        finished.push_back({id, *stop});
        finish(r, *stop);
      }
      continue;
    }
    // Mid-prefill, the runner's logits for a partial prompt are not a next token. (Async,
    // num_computed_tokens already counts the step scheduled after this one.)
    if (!config_.async_scheduling && !tokens.empty() && r.num_computed_tokens < r.num_tokens()) {
      fail("update_from_output: request ", id, " is mid-prefill but got sampled tokens");
    }
    const std::optional<RequestStatus> stop = take_sampled(r, tokens);
    // Only KV whose tokens are known is cached (cache_full_blocks stops at the last one): not
    // the freshly sampled token's. Async, that includes the KV the step after this one
    // computes, which any later step that reads it runs after.
    kv_.cache_full_blocks(r.kv_view(), r.num_computed_tokens);
    if (stop) {
      finished.push_back({id, *stop});
      finish(r, *stop);
    }
  }
  return finished;
}

void Scheduler::recompute(const RequestId& id) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  Request& r = *it->second;
  r.num_output_placeholders = 0;
  if (r.status != RequestStatus::Running) return;  // already waiting to be recomputed
  running_.erase(std::find(running_.begin(), running_.end(), &r));
  kv_.free(id);
  r.status = RequestStatus::Preempted;
  r.num_computed_tokens = 0;
  ++r.num_preemptions;
  ++num_preemptions_;
  waiting_->add_preempted(&r);
  recomputed_since_last_step_.push_back(id);
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
