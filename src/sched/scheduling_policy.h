// Which request waits least and which one is given up first under memory pressure. The
// policy is a value in SchedulerConfig; everything that differs between policies is here.
#pragma once

#include <memory>
#include <span>

#include "sched/request_queue.h"

namespace pagoda {

enum class SchedulingPolicy {
  Fcfs,      // arrival order; preempt the most recently admitted running request
  Priority,  // smallest priority value first, then arrival; preempt the largest value
};

[[nodiscard]] std::unique_ptr<RequestQueue> make_waiting_queue(SchedulingPolicy policy);

// The running request to preempt when memory runs out; running must not be empty.
// running is in admission order.
[[nodiscard]] Request* preemption_victim(SchedulingPolicy policy,
                                         std::span<Request* const> running);

}  // namespace pagoda
