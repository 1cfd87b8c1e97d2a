// The knobs of the token-budget scheduler (vLLM's SchedulerConfig + CacheConfig subset).
#pragma once

#include "sched/scheduling_policy.h"

namespace pagoda {

struct SchedulerConfig {
  int max_num_batched_tokens = 2048;  // token budget of one step
  int max_num_seqs = 128;             // running requests at most
  int max_model_len = 2048;           // prompt + output tokens at most
  int block_size = 16;                // tokens per KV block
  int num_kv_blocks = 1024;           // including the null block
  // A prefill chunk is at most this many tokens (0: no limit), so long prompts cannot
  // starve decodes of the budget.
  int long_prefill_token_threshold = 0;
  bool enable_prefix_caching = true;
  SchedulingPolicy policy = SchedulingPolicy::Fcfs;
  // vLLM's async scheduling: schedule() may run while the previous step is still computing.
  // A request that samples in a step gets an output placeholder, so the next schedule()
  // can give it its next decode token before the sampled one is known;
  // update_from_output() then fills the placeholder.
  bool async_scheduling = false;
};

}  // namespace pagoda
