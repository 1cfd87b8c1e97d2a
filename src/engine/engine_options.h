// The engine's knobs, named as vLLM's engine arguments, and how they become a scheduler
// config for a given model (kv_cache_memory bytes -> number of KV blocks).
#pragma once

#include <cstdint>

#include "loader/model_spec.h"
#include "sched/scheduler_config.h"

namespace pagoda {

struct EngineOptions {
  int max_num_seqs = 128;
  int max_num_batched_tokens = 2048;
  int max_model_len = 0;  // 0: the model's context length (capped by the KV cache)
  int block_size = 16;
  // Bytes of KV cache (vLLM's CPU backend: VLLM_CPU_KVCACHE_SPACE). 1 GiB by default.
  int64_t kv_cache_memory = int64_t{1} << 30;
  bool enable_prefix_caching = true;
  SchedulingPolicy scheduling_policy = SchedulingPolicy::Fcfs;
  int long_prefill_token_threshold = 0;
  int num_threads = 0;  // CPU backend threads; 0: all cores
};

// Throws Error on an unusable option (non-positive sizes, a cache too small for one block,
// max_model_len beyond the model's context).
[[nodiscard]] SchedulerConfig make_scheduler_config(const EngineOptions& options, const ModelSpec& spec);

}  // namespace pagoda
