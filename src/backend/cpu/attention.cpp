#include "backend/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.h"

namespace pagoda::cpu {

void write_kv(const float* k, const float* v, float* k_cache, float* v_cache, const CacheLayout& layout,
              const AttentionMetadata& meta) {
  const int64_t row = layout.kv_heads * layout.head_dim;
  const int64_t num_slots = layout.num_blocks * layout.block_size;
  for (int t = 0; t < meta.num_tokens; ++t) {
    const int64_t slot = meta.slot_mapping[t];
    PAGODA_CHECK(slot >= 0 && slot < num_slots);
    std::memcpy(k_cache + slot * row, k + t * row, static_cast<size_t>(row) * sizeof(float));
    std::memcpy(v_cache + slot * row, v + t * row, static_cast<size_t>(row) * sizeof(float));
  }
}

void paged_attention(ThreadPool& pool, const float* q, const float* k_cache, const float* v_cache,
                     const CacheLayout& layout, int64_t num_heads, const AttentionMetadata& meta,
                     float scale, int sliding_window, float softcap, float* out) {
  const int64_t head_dim = layout.head_dim;
  const int64_t kv_heads = layout.kv_heads;
  PAGODA_CHECK(kv_heads > 0 && num_heads % kv_heads == 0);
  const int64_t group = num_heads / kv_heads;
  const int64_t slot_stride = kv_heads * head_dim;

  // The sequence of each token, so that (token, head) pairs can be split freely.
  std::vector<int32_t> seq_of(static_cast<size_t>(meta.num_tokens));
  for (int s = 0; s < meta.num_seqs; ++s) {
    const int32_t q_begin = meta.query_start_loc[s], q_end = meta.query_start_loc[s + 1];
    PAGODA_CHECK(0 <= q_begin && q_begin <= q_end && q_end <= meta.num_tokens);
    PAGODA_CHECK(meta.seq_lens[s] >= q_end - q_begin);
    PAGODA_CHECK((meta.seq_lens[s] + layout.block_size - 1) / layout.block_size <= meta.max_blocks_per_seq);
    for (int32_t t = q_begin; t < q_end; ++t) seq_of[static_cast<size_t>(t)] = s;
  }

  pool.parallel_for(meta.num_tokens * num_heads, [&](int64_t begin, int64_t end) {
    std::vector<float> acc(static_cast<size_t>(head_dim));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / num_heads, h = task % num_heads;
      const int s = seq_of[static_cast<size_t>(t)];
      const int64_t num_new = meta.query_start_loc[s + 1] - meta.query_start_loc[s];
      // The new tokens are the last num_new of the context.
      const int64_t pos = meta.seq_lens[s] - num_new + (t - meta.query_start_loc[s]);
      const int64_t first = sliding_window > 0 ? std::max<int64_t>(0, pos - sliding_window + 1) : 0;
      const int32_t* blocks = meta.block_tables + static_cast<int64_t>(s) * meta.max_blocks_per_seq;
      const float* qv = q + (t * num_heads + h) * head_dim;
      const int64_t kvh = h / group;

      float running_max = -std::numeric_limits<float>::infinity();
      float denom = 0.0f;
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t p = first; p <= pos; ++p) {
        const int64_t block = blocks[p / layout.block_size];
        PAGODA_CHECK(block >= 0 && block < layout.num_blocks);
        const int64_t offset = (block * layout.block_size + p % layout.block_size) * slot_stride + kvh * head_dim;
        const float* kv = k_cache + offset;
        const float* vv = v_cache + offset;
        float score = 0.0f;
        for (int64_t d = 0; d < head_dim; ++d) score += qv[d] * kv[d];
        score *= scale;
        if (softcap > 0.0f) score = softcap * std::tanh(score / softcap);
        if (score > running_max) {
          // Rescale what was accumulated under the old maximum.
          const float correction = std::exp(running_max - score);
          denom *= correction;
          for (int64_t d = 0; d < head_dim; ++d) acc[static_cast<size_t>(d)] *= correction;
          running_max = score;
        }
        const float weight = std::exp(score - running_max);
        denom += weight;
        for (int64_t d = 0; d < head_dim; ++d) acc[static_cast<size_t>(d)] += weight * vv[d];
      }
      float* o = out + (t * num_heads + h) * head_dim;
      const float inv = 1.0f / denom;
      for (int64_t d = 0; d < head_dim; ++d) o[d] = acc[static_cast<size_t>(d)] * inv;
    }
  });
}

}  // namespace pagoda::cpu
