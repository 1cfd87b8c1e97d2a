#include "sched/scheduling_policy.h"

#include <algorithm>

#include "core/error.h"

namespace pagoda {

std::unique_ptr<RequestQueue> make_waiting_queue(SchedulingPolicy policy) {
  if (policy == SchedulingPolicy::Priority) return std::make_unique<PriorityQueue>();
  return std::make_unique<FcfsQueue>();
}

Request* preemption_victim(SchedulingPolicy policy, std::span<Request* const> running) {
  PAGODA_CHECK(!running.empty());
  if (policy == SchedulingPolicy::Fcfs) return running.back();
  // Lowest priority = largest value; among equals the latest arrival loses.
  return *std::max_element(running.begin(), running.end(), [](const Request* a, const Request* b) {
    if (a->priority() != b->priority()) return a->priority() < b->priority();
    return a->arrival_seq() < b->arrival_seq();
  });
}

}  // namespace pagoda
