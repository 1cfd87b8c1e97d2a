// A snapshot of what the engine is doing, for /metrics and logs: the scheduler's queues
// and KV usage plus running totals. LLMEngine refreshes it after every step; readers on
// any thread get a copy.
#pragma once

#include <cstdint>

#include "sched/scheduler_interface.h"

namespace pagoda {

struct EngineStats {
  SchedulerStats scheduler;           // running / waiting requests, KV usage, prefix cache
  int64_t num_prompt_tokens = 0;      // prompt tokens of requests admitted so far
  int64_t num_generation_tokens = 0;  // output tokens streamed to requests so far
  int64_t num_steps = 0;              // engine steps run
  int64_t num_kv_blocks = 0;          // blocks in the KV pool, the null block included
};

}  // namespace pagoda
