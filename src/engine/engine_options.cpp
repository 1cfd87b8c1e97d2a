#include "engine/engine_options.h"

#include <algorithm>
#include <optional>

#include "core/error.h"
#include "model/kv_cache.h"

namespace pagoda {

SchedulerConfig make_scheduler_config(const EngineOptions& o, const ModelSpec& spec, DType kv_cache_dtype) {
  if (o.max_num_seqs < 1) fail("max_num_seqs must be >= 1, got ", o.max_num_seqs);
  if (o.max_num_batched_tokens < 1) {
    fail("max_num_batched_tokens must be >= 1, got ", o.max_num_batched_tokens);
  }
  if (o.block_size < 1 || o.block_size > 1024) fail("block_size must be in [1, 1024], got ", o.block_size);
  if (o.long_prefill_token_threshold < 0) {
    fail("long_prefill_token_threshold must be >= 0, got ", o.long_prefill_token_threshold);
  }
  const int context = spec.max_position_embeddings > 0 ? spec.max_position_embeddings : 0;
  int max_model_len = o.max_model_len > 0 ? o.max_model_len : context;
  if (max_model_len <= 0) fail("max_model_len must be given: the model does not state its context");
  if (o.max_model_len < 0) fail("max_model_len must be >= 0, got ", o.max_model_len);
  if (context > 0 && max_model_len > context) {
    fail("max_model_len ", max_model_len, " exceeds the model's context of ", context);
  }
  const int64_t block_bytes = static_cast<int64_t>(KvCache::bytes_per_token(spec, kv_cache_dtype)) * o.block_size;
  if (o.kv_cache_memory < 0) fail("kv_cache_memory must be >= 0, got ", o.kv_cache_memory);
  const int64_t kv_bytes = o.kv_cache_memory > 0 ? o.kv_cache_memory : kDefaultCpuKvCacheMemory;
  if (kv_bytes < block_bytes) {
    fail("kv_cache_memory of ", kv_bytes, " bytes holds no KV block (", block_bytes, " bytes each)");
  }
  const int64_t blocks = std::min<int64_t>(kv_bytes / block_bytes, 1 << 24);
  // Not given: the model's context, or what the cache holds if that is less (an explicit
  // max_model_len beyond the cache is the scheduler's error to report).
  if (o.max_model_len == 0) {
    max_model_len = static_cast<int>(std::min<int64_t>(max_model_len, blocks * o.block_size));
  }

  SchedulerConfig c;
  c.max_num_seqs = o.max_num_seqs;
  c.max_num_batched_tokens = o.max_num_batched_tokens;
  c.max_model_len = max_model_len;
  c.block_size = o.block_size;
  c.num_kv_blocks = static_cast<int>(blocks) + 1;  // + the null block
  c.long_prefill_token_threshold = o.long_prefill_token_threshold;
  c.enable_prefix_caching = o.enable_prefix_caching;
  c.policy = o.scheduling_policy;
  c.async_scheduling = o.async_scheduling.value_or(false);
  return c;
}

EngineOptions with_kv_cache_memory(EngineOptions o, const Backend& backend, const ModelSpec& spec) {
  const std::optional<Backend::MemoryInfo> mem = backend.memory_info();
  if (o.kv_cache_memory != 0 || !mem) return o;
  if (!(o.gpu_memory_utilization > 0 && o.gpu_memory_utilization <= 1)) {
    fail("gpu_memory_utilization must be in (0, 1], got ", o.gpu_memory_utilization);
  }
  // One step's activations at most (F32): the residual stream and its norm, q/k/v, the
  // attention output, gate/up, and the logits of every sequence; twice that for the pool.
  const int64_t per_token = 4 * (4 * spec.hidden_size + 2 * int64_t{spec.num_heads} * spec.head_dim +
                                 2 * int64_t{spec.num_kv_heads} * spec.head_dim + 2 * spec.intermediate_size);
  const int64_t reserve = 2 * (int64_t{o.max_num_batched_tokens} * per_token +
                               int64_t{o.max_num_seqs} * 4 * spec.vocab_size);
  const auto total = static_cast<double>(mem->total_bytes);
  const auto in_use = static_cast<double>(mem->total_bytes - mem->free_bytes);
  const auto budget = static_cast<int64_t>(o.gpu_memory_utilization * total - in_use) - reserve;
  if (budget <= 0) {
    fail("gpu_memory_utilization ", o.gpu_memory_utilization, " of ", mem->total_bytes >> 20, " MiB leaves no room for the KV cache (",
         static_cast<int64_t>(in_use) >> 20, " MiB in use, ", reserve >> 20, " MiB kept for activations)");
  }
  o.kv_cache_memory = budget;
  return o;
}

}  // namespace pagoda
