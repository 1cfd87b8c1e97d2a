// The engine's knobs, named as vLLM's engine arguments, and how they become a scheduler
// config for a given model (kv_cache_memory bytes -> number of KV blocks).
#pragma once

#include <cstdint>
#include <optional>

#include <string>

#include "backend/backend.h"
#include "loader/model_spec.h"
#include "sched/scheduler_config.h"

namespace pagoda {

struct EngineOptions {
  int max_num_seqs = 128;
  int max_num_batched_tokens = 2048;
  int max_model_len = 0;  // 0: the model's context length (capped by the KV cache)
  int block_size = 16;
  // Bytes of KV cache (vLLM's --kv-cache-memory; its CPU backend: VLLM_CPU_KVCACHE_SPACE).
  // 0: on a GPU, what gpu_memory_utilization leaves after the weights; on the CPU, 1 GiB.
  int64_t kv_cache_memory = 0;
  double gpu_memory_utilization = 0.9;  // share of the GPU's memory pagoda may use
  std::string device = "auto";          // cpu, cuda, or auto (cuda when a GPU is present)
  bool enable_prefix_caching = true;
  SchedulingPolicy scheduling_policy = SchedulingPolicy::Fcfs;
  int long_prefill_token_threshold = 0;
  int num_threads = 0;  // CPU backend threads; 0: all cores
  // vLLM's --enforce-eager: no decode graphs (runner/decode_graphs.h) on a GPU.
  bool enforce_eager = false;
  // vLLM's --async-scheduling: step N+1 is scheduled and launched while step N computes, and
  // step N's outputs are processed while N+1 computes (engine_core.h). Unset: on where the
  // backend can sample ahead (a GPU). On the CPU, which computes a step within its launch,
  // it would only hold every output back by a step.
  std::optional<bool> async_scheduling;
};

// Throws Error on an unusable option (non-positive sizes, a cache too small for one block,
// max_model_len beyond the model's context). Blocks are counted in caches of
// kv_cache_dtype (the backend's).
[[nodiscard]] SchedulerConfig make_scheduler_config(const EngineOptions& options, const ModelSpec& spec,
                                                    DType kv_cache_dtype = DType::F32);

// The KV cache on 1 GiB when the CPU runs the model.
constexpr int64_t kDefaultCpuKvCacheMemory = int64_t{1} << 30;

// options with kv_cache_memory decided for this backend: when it is 0 and the backend has
// device memory, gpu_memory_utilization of that memory less what is in use (the weights)
// and a reserve for one step's activations. Throws Error when nothing is left.
[[nodiscard]] EngineOptions with_kv_cache_memory(EngineOptions options, const Backend& backend,
                                                 const ModelSpec& spec);

}  // namespace pagoda
