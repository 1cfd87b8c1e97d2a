// The paged KV cache kernels of the CPU backend: writing new keys/values into their slots
// and causal attention of a ragged batch (prefill chunks and decodes mixed) over it.
// Layouts are those of backend.h (caches [num_blocks, block_size, kv_heads, head_dim]).
#pragma once

#include <cstdint>

#include "backend/backend.h"
#include "core/thread_pool.h"

namespace pagoda::cpu {

struct CacheLayout {
  int64_t num_blocks = 0;
  int64_t block_size = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
};

void write_kv(const float* k, const float* v, float* k_cache, float* v_cache, const CacheLayout& layout,
              const AttentionMetadata& meta);

// q, out: [num_tokens, num_heads, head_dim]. Scores in f32 with a running-max softmax.
void paged_attention(ThreadPool& pool, const float* q, const float* k_cache, const float* v_cache,
                     const CacheLayout& layout, int64_t num_heads, const AttentionMetadata& meta,
                     float scale, int sliding_window, float softcap, float* out);

}  // namespace pagoda::cpu
