// vLLM v1's scheduler: one token budget per step, spent first on running requests
// (decodes and continuing chunked prefills), then on waiting ones in policy order.
// Prefix-cache hits shorten prefills; when the KV cache runs out, running requests are
// preempted by recompute (blocks freed, back to waiting, recomputed from scratch later).
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "sched/request_queue.h"
#include "sched/scheduler_config.h"
#include "sched/scheduler_interface.h"

namespace pagoda {

class Scheduler final : public SchedulerInterface {
 public:
  // Throws pagoda::Error on an unusable config, e.g. a KV cache too small to hold even
  // one request of max_model_len tokens.
  explicit Scheduler(const SchedulerConfig& config, BlockHasher hasher = keyed_block_hasher());

  void add_request(RequestParams params) override;
  [[nodiscard]] SchedulerOutput schedule() override;
  std::vector<FinishedRequest> update_from_output(const SchedulerOutput& output,
                                                  const SampledTokens& sampled) override;
  void finish_requests(std::span<const RequestId> ids, RequestStatus status) override;
  // Async: the runner could not sample the request's pending token on its device (a NaN or
  // infinite logit, which the host sampler must see) and its logits are gone. Drops its
  // placeholders (the runner drops any token of a later step) and recomputes it from
  // scratch, as a preemption does, so that the token is sampled again.
  void recompute(const RequestId& id);

  [[nodiscard]] int num_waiting_requests() const override {
    return static_cast<int>(waiting_->size());
  }
  [[nodiscard]] int num_running_requests() const override {
    return static_cast<int>(running_.size());
  }
  [[nodiscard]] SchedulerStats stats() const override;
  bool reset_prefix_cache() override { return kv_.reset_prefix_cache(); }

  // For tests and invariant checks. find_request is null once a request has finished.
  [[nodiscard]] const Request* find_request(const RequestId& id) const;
  [[nodiscard]] const std::vector<Request*>& running() const { return running_; }
  [[nodiscard]] std::vector<Request*> waiting() const { return waiting_->to_vector(); }
  [[nodiscard]] const KVCacheManager& kv() const { return kv_; }
  [[nodiscard]] const SchedulerConfig& config() const { return config_; }

 private:
  struct StepState;  // bookkeeping of one schedule() call

  void schedule_running(StepState& step);
  void schedule_waiting(StepState& step);
  // Preempts the policy's victim; returns it.
  Request* preempt_one(StepState& step);
  [[nodiscard]] int clamp_new_tokens(int num_new_tokens, int token_budget) const;
  // Async: the token being sampled is the request's last (max_tokens, max_model_len), so it
  // has nothing more to schedule. (A stop token can only be seen once it is known.)
  [[nodiscard]] bool ends_with_pending_token(const Request& r) const;
  // Appends a step's sampled tokens, filling placeholders; the finished status they reach.
  std::optional<RequestStatus> take_sampled(Request& r, std::span<const TokenId> tokens);
  // The finished status a request reached with its last appended token, if any.
  [[nodiscard]] std::optional<RequestStatus> check_stop(const Request& r) const;
  void finish(Request& r, RequestStatus status);

  SchedulerConfig config_;
  KVCacheManager kv_;
  std::unordered_map<RequestId, std::unique_ptr<Request>> requests_;  // live requests
  std::unique_ptr<RequestQueue> waiting_;
  std::vector<Request*> running_;  // in admission order
  std::vector<RequestId> finished_since_last_step_;
  std::vector<RequestId> recomputed_since_last_step_;  // the runner drops them as preempted
  uint64_t next_arrival_seq_ = 0;
  int64_t num_preemptions_ = 0;
};

}  // namespace pagoda
