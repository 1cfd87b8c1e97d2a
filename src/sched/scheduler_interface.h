// The contract between the engine core and a scheduler: add / schedule / update / finish.
// The engine depends on this, so other scheduling algorithms can slot in beside Scheduler.
#pragma once

#include <span>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "sched/request.h"
#include "sched/scheduler_output.h"

namespace pagoda {

struct SchedulerStats {
  int num_running_reqs = 0;
  int num_waiting_reqs = 0;
  double kv_cache_usage = 0.0;  // fraction of KV blocks in use
  PrefixCacheStats prefix_cache;
  int64_t num_preemptions = 0;
};

class SchedulerInterface {
 public:
  virtual ~SchedulerInterface() = default;

  // Queues a request; throws pagoda::Error on invalid parameters.
  virtual void add_request(RequestParams params) = 0;
  // Picks the tokens to compute in the next step.
  [[nodiscard]] virtual SchedulerOutput schedule() = 0;
  // Takes the runner's sampled tokens for the step `output` described; returns the
  // requests that finished in it.
  virtual std::vector<FinishedRequest> update_from_output(const SchedulerOutput& output,
                                                          const SampledTokens& sampled) = 0;
  // Ends requests (abort: status FinishedAborted). Unknown or finished ids are ignored.
  virtual void finish_requests(std::span<const RequestId> ids, RequestStatus status) = 0;

  [[nodiscard]] virtual int num_waiting_requests() const = 0;
  [[nodiscard]] virtual int num_running_requests() const = 0;
  [[nodiscard]] bool has_unfinished_requests() const {
    return num_waiting_requests() + num_running_requests() > 0;
  }
  [[nodiscard]] virtual SchedulerStats stats() const = 0;
  // Drops the prefix cache; false while requests hold blocks.
  virtual bool reset_prefix_cache() = 0;
};

}  // namespace pagoda
