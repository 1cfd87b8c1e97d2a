// A layer's attention inputs from its stacked q/k/v projection in one pass: split the
// columns, norm q and k per head (Qwen3, Gemma 3), rotate them, write q out and k, v into
// the paged caches. Unfused that is five launches and four round trips through memory per
// layer, which at batch 1 cost more than the work.
//
// One warp per (token, head) row of qkv: heads [0, heads) are q, then kv_heads of k, then of
// v. The warp stages its row in shared memory (rotation pairs may sit in different lanes),
// reduces the sum of squares for a norm, then writes the rotated pairs. The arithmetic is
// rope.cu's and write_kv's, so without norms the result has the same bits as the unfused ops.
#include <cstdint>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/head_rope.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pdl.h"

namespace pagoda::cuda {

namespace {

constexpr int kWarps = 4;            // rows a block
constexpr int kMaxHeadDim = 512;

__device__ __forceinline__ void store(float* p, float x) { *p = x; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }

template <class KvT>
__global__ void __launch_bounds__(kWarps * 32)
    split_rope_write_kv_kernel(const float* qkv, QkvLayout l, const int32_t* positions, const float* inv_freq,
                               const float* q_norm, const float* k_norm, float eps, float* q_out, KvT* k_cache,
                               KvT* v_cache, const int64_t* slot_mapping) {
  __shared__ float rows[kWarps][kMaxHeadDim];
  pdl_launch_dependents();
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t row_heads = l.heads + 2 * l.kv_heads;
  const int64_t j = int64_t{blockIdx.y} * kWarps + warp;
  const int64_t t = blockIdx.x;
  pdl_wait();
  if (j >= row_heads) return;
  const int64_t slot = slot_mapping[t];
  const bool is_q = j < l.heads, is_k = !is_q && j < l.heads + l.kv_heads;
  RopeAngles<kMaxHeadDim / 64> angles{};
  if (is_q || is_k) angles = rope_angles<kMaxHeadDim / 64>(l, positions[t], inv_freq, lane);
  const int d = l.head_dim;
  const float* src = qkv + (t * row_heads + j) * d;
  float* row = rows[warp];
  for (int i = lane; i < d; i += 32) row[i] = src[i];
  __syncwarp();

  if (!is_q && !is_k) {  // a v head: copied into the cache
    if (slot < 0) return;  // a padding token
    KvT* dst = v_cache + (slot * l.kv_heads + (j - l.heads - l.kv_heads)) * d;
    for (int i = lane; i < d; i += 32) store(dst + i, row[i]);
    return;
  }
  const float* norm = is_q ? q_norm : k_norm;
  if (norm != nullptr) norm_head_row(row, d, norm, eps, lane);
  if (is_k && slot < 0) return;
  rotate_head_row(row, l, angles, lane, [&](int i, float x) {
    if (is_q) {
      q_out[(t * l.heads + j) * d + i] = x;
    } else {
      store(k_cache + (slot * l.kv_heads + (j - l.heads)) * d + i, x);
    }
  });
}

}  // namespace

bool split_rope_write_kv_fits(int64_t head_dim) { return head_dim % 2 == 0 && head_dim <= kMaxHeadDim; }

void split_rope_write_kv(const float* qkv, int64_t tokens, const QkvLayout& layout, const int32_t* positions,
                         const float* inv_freq, const float* q_norm, const float* k_norm, float eps, float* q_out,
                         void* k_cache, void* v_cache, bool bf16, const int64_t* slot_mapping, cudaStream_t stream) {
  if (tokens <= 0) return;
  PAGODA_CHECK(split_rope_write_kv_fits(layout.head_dim));
  const int64_t row_heads = layout.heads + 2 * layout.kv_heads;
  const dim3 grid(static_cast<unsigned>(tokens), static_cast<unsigned>((row_heads + kWarps - 1) / kWarps));
  const char* name = "split_rope_write_kv";
  if (bf16) {
    launch_pdl(split_rope_write_kv_kernel<__nv_bfloat16>, grid, dim3(kWarps * 32), 0, stream, name, qkv, layout,
               positions, inv_freq, q_norm, k_norm, eps, q_out, static_cast<__nv_bfloat16*>(k_cache),
               static_cast<__nv_bfloat16*>(v_cache), slot_mapping);
  } else {
    launch_pdl(split_rope_write_kv_kernel<float>, grid, dim3(kWarps * 32), 0, stream, name, qkv, layout, positions,
               inv_freq, q_norm, k_norm, eps, q_out, static_cast<float*>(k_cache), static_cast<float*>(v_cache),
               slot_mapping);
  }
}

}  // namespace pagoda::cuda
