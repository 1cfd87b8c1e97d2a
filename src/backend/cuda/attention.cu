// Paged attention for mixed prefill + decode batches, and the KV cache write.
//
// First version, correct before fast: one warp per (token, query head) walks the token's
// causal context key by key with an online softmax, all in F32. Lane l owns the head
// dimensions l, l + 32, ... so every K and V row is read coalesced. Blocks hold 4 warps (4
// heads of one token). When the batch has too few (token, head) pairs to fill the GPU (a
// few decodes over long contexts), the context is split (flash-decoding): each split writes
// its running max, denominator and unnormalized sum, and a second kernel combines them.
// Keys go four at a time (see the loop). Not yet: K/V tiles shared by the heads of a GQA
// group, tensor cores for prefill.
#include <algorithm>
#include <cmath>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "core/error.h"

namespace pagoda::cuda {

namespace {

constexpr int kWarpsPerBlock = 4;

__global__ void write_kv_kernel(const float* k, const float* v, float* k_cache, float* v_cache,
                                const int64_t* slot_mapping, int64_t total, int64_t row) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= total) return;
  const int64_t t = i / row, c = i % row;
  const int64_t slot = slot_mapping[t];
  if (slot < 0) return;  // a padding token
  k_cache[slot * row + c] = k[i];
  v_cache[slot * row + c] = v[i];
}

// kPerLane = head_dim / 32 (1..8), so the query and accumulator stay in registers.
// partial == nullptr: one split, out is written. Otherwise split blockIdx.z covers keys
// [first + z * split_keys, ...) and writes partial[(z, t, h)] = {max, denom, acc[head_dim]}.
template <int kPerLane>
__global__ void attention_kernel(AttentionArgs a, PagedKv kv, int split_keys, float* partial) {
  const int t = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y) * kWarpsPerBlock + static_cast<int>(threadIdx.x) / 32;
  if (h >= a.num_heads) return;  // the whole warp leaves; no block-wide barrier follows
  const int lane = static_cast<int>(threadIdx.x) % 32;

  // The sequence this token belongs to: the last s with query_start_loc[s] <= t.
  int lo = 0, hi = a.num_seqs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (a.query_start_loc[mid] <= t) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const int s = lo;
  const int q_begin = a.query_start_loc[s];
  const int num_new = a.query_start_loc[s + 1] - q_begin;
  const int pos = a.seq_lens[s] - num_new + (t - q_begin);  // the new tokens end the context
  const int first = a.sliding_window > 0 ? max(0, pos - a.sliding_window + 1) : 0;
  const int64_t kvh = h / (a.num_heads / kv.kv_heads);
  const int64_t head_dim = kv.head_dim;
  const int32_t* blocks = a.block_tables + static_cast<int64_t>(s) * a.max_blocks_per_seq;

  float q[kPerLane], acc[kPerLane];
  const float* qrow = a.q + (static_cast<int64_t>(t) * a.num_heads + h) * head_dim;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    q[j] = qrow[j * 32 + lane];
    acc[j] = 0.0f;
  }
  float running_max = -INFINITY, denom = 0.0f;
  int begin = first, end = pos + 1;
  if (partial != nullptr) {
    begin = first + static_cast<int>(blockIdx.z) * split_keys;
    end = min(end, begin + split_keys);
  }
  // Keys in groups of kKeys: the group's K rows are loaded together and its dot products
  // reduced side by side, so a warp keeps several loads and shuffle chains in flight instead
  // of waiting on one key at a time (the loop was latency-bound). The grouping starts at
  // `begin`, a function of the token alone, so batch composition cannot change the result.
  constexpr int kKeys = 4;
  const auto row_offset = [&](int p) {
    const int64_t slot = static_cast<int64_t>(blocks[p / kv.block_size]) * kv.block_size + p % kv.block_size;
    return (slot * kv.kv_heads + kvh) * head_dim;
  };
  int p = begin;
  for (; p + kKeys <= end; p += kKeys) {
    int64_t offset[kKeys];
    float dot[kKeys];
#pragma unroll
    for (int i = 0; i < kKeys; ++i) offset[i] = row_offset(p + i);
#pragma unroll
    for (int i = 0; i < kKeys; ++i) {
      const float* krow = kv.k_cache + offset[i];
      dot[i] = 0.0f;
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) dot[i] += q[j] * krow[j * 32 + lane];
    }
    for (int o = 16; o > 0; o /= 2) {
#pragma unroll
      for (int i = 0; i < kKeys; ++i) dot[i] += __shfl_xor_sync(0xffffffffu, dot[i], o);
    }
    float new_max = running_max;
#pragma unroll
    for (int i = 0; i < kKeys; ++i) {
      dot[i] *= a.scale;
      if (a.softcap > 0.0f) dot[i] = a.softcap * tanhf(dot[i] / a.softcap);
      new_max = fmaxf(new_max, dot[i]);
    }
    const float correction = expf(running_max - new_max);
    denom *= correction;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) acc[j] *= correction;
#pragma unroll
    for (int i = 0; i < kKeys; ++i) {
      const float weight = expf(dot[i] - new_max);
      denom += weight;
      const float* vrow = kv.v_cache + offset[i];
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) acc[j] += weight * vrow[j * 32 + lane];
    }
    running_max = new_max;
  }
  for (; p < end; ++p) {  // the last keys, one at a time
    const int64_t offset = row_offset(p);
    const float* krow = kv.k_cache + offset;
    const float* vrow = kv.v_cache + offset;
    float dot = 0.0f;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) dot += q[j] * krow[j * 32 + lane];
    for (int o = 16; o > 0; o /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, o);
    float score = dot * a.scale;
    if (a.softcap > 0.0f) score = a.softcap * tanhf(score / a.softcap);
    const float new_max = fmaxf(running_max, score);
    const float correction = expf(running_max - new_max);
    const float weight = expf(score - new_max);
    denom = denom * correction + weight;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) acc[j] = acc[j] * correction + weight * vrow[j * 32 + lane];
    running_max = new_max;
  }
  if (partial != nullptr) {
    float* slot = partial + ((static_cast<int64_t>(blockIdx.z) * a.num_tokens + t) * a.num_heads + h) * (head_dim + 2);
    if (lane == 0) {
      slot[0] = running_max;
      slot[1] = denom;
    }
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) slot[2 + j * 32 + lane] = acc[j];
    return;
  }
  float* orow = a.out + (static_cast<int64_t>(t) * a.num_heads + h) * head_dim;
  const float inv = 1.0f / denom;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) orow[j * 32 + lane] = acc[j] * inv;
}

// One warp per (token, head): merges the splits' partial softmax sums in split order.
template <int kPerLane>
__global__ void combine_splits_kernel(const float* partial, int num_splits, int num_tokens, int num_heads,
                                      int64_t head_dim, float* out) {
  const int t = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y) * kWarpsPerBlock + static_cast<int>(threadIdx.x) / 32;
  if (h >= num_heads) return;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t stride = static_cast<int64_t>(num_tokens) * num_heads * (head_dim + 2);
  const float* first = partial + (static_cast<int64_t>(t) * num_heads + h) * (head_dim + 2);
  float global_max = -INFINITY;
  for (int z = 0; z < num_splits; ++z) global_max = fmaxf(global_max, first[z * stride]);
  float denom = 0.0f, acc[kPerLane] = {};
  for (int z = 0; z < num_splits; ++z) {
    const float* slot = first + z * stride;
    if (slot[1] == 0.0f) continue;  // a split past this token's context
    const float w = expf(slot[0] - global_max);
    denom += w * slot[1];
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) acc[j] += w * slot[2 + j * 32 + lane];
  }
  float* orow = out + (static_cast<int64_t>(t) * num_heads + h) * head_dim;
  const float inv = 1.0f / denom;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) orow[j * 32 + lane] = acc[j] * inv;
}

template <int kPerLane>
void launch_attention(const AttentionArgs& a, const PagedKv& kv, const AttentionSplit& split, cudaStream_t stream) {
  const unsigned head_blocks = static_cast<unsigned>((a.num_heads + kWarpsPerBlock - 1) / kWarpsPerBlock);
  if (split.num_splits <= 1) {
    attention_kernel<kPerLane><<<dim3(static_cast<unsigned>(a.num_tokens), head_blocks), kWarpsPerBlock * 32, 0,
                                 stream>>>(a, kv, 0, nullptr);
    check_launch("paged_attention");
    return;
  }
  attention_kernel<kPerLane><<<dim3(static_cast<unsigned>(a.num_tokens), head_blocks,
                                    static_cast<unsigned>(split.num_splits)),
                               kWarpsPerBlock * 32, 0, stream>>>(a, kv, split.split_keys, split.workspace);
  check_launch("paged_attention (split)");
  combine_splits_kernel<kPerLane><<<dim3(static_cast<unsigned>(a.num_tokens), head_blocks), kWarpsPerBlock * 32, 0,
                                    stream>>>(split.workspace, split.num_splits, a.num_tokens, a.num_heads,
                                              kv.head_dim, a.out);
  check_launch("paged_attention (combine)");
}

}  // namespace

int attention_splits(int num_tokens, int num_heads, int max_context, int num_sms) {
  const int64_t blocks = static_cast<int64_t>(num_tokens) * ((num_heads + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const int64_t wanted = 4 * static_cast<int64_t>(num_sms);
  if (blocks >= wanted) return 1;
  const int64_t by_fill = (wanted + blocks - 1) / blocks;
  const int64_t by_length = (max_context + 31) / 32;
  return static_cast<int>(std::max<int64_t>(1, std::min(by_fill, by_length)));
}

void write_kv(const float* k, const float* v, float* k_cache, float* v_cache, const int64_t* slot_mapping,
              int num_tokens, int64_t row, cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(num_tokens) * row;
  if (total <= 0) return;
  constexpr int kThreads = 256;
  write_kv_kernel<<<static_cast<unsigned>((total + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      k, v, k_cache, v_cache, slot_mapping, total, row);
  check_launch("write_kv");
}

void paged_attention(const AttentionArgs& args, const PagedKv& kv, const AttentionSplit& split, cudaStream_t stream) {
  if (args.num_tokens <= 0) return;
  if (kv.head_dim % 32 != 0 || kv.head_dim > 256) {
    fail("paged_attention (CUDA): head_dim ", kv.head_dim, " is not a multiple of 32 up to 256");
  }
  switch (kv.head_dim / 32) {
    case 1: return launch_attention<1>(args, kv, split, stream);
    case 2: return launch_attention<2>(args, kv, split, stream);
    case 3: return launch_attention<3>(args, kv, split, stream);
    case 4: return launch_attention<4>(args, kv, split, stream);
    case 5: return launch_attention<5>(args, kv, split, stream);
    case 6: return launch_attention<6>(args, kv, split, stream);
    case 7: return launch_attention<7>(args, kv, split, stream);
    default: return launch_attention<8>(args, kv, split, stream);
  }
}

}  // namespace pagoda::cuda
