// One attention head's row of a stacked q/k/v projection made ready for attention, by one
// warp: an optional per-head RMSNorm (Qwen3, Gemma 3) and the rotary embedding. Shared by
// split_rope_write_kv (attention_inputs.cu) and the decode attention that does the same
// work itself (attention.cu), so that the two produce the same bits.
//
// The angles depend only on a token's position and the frequencies, which the host uploaded
// before the step: the decode attention computes them before its pdl_wait, while the kernel
// before it still runs.
#pragma once

#include "backend/cuda/kernels.h"

namespace pagoda::cuda {

// cos and sin (times the attention factor) of the rotation pairs e = lane + 32 j that lie
// within rot_dim / 2; kPairs >= head_dim / 64, rounded up.
template <int kPairs>
struct RopeAngles {
  float cos[kPairs];
  float sin[kPairs];
};

template <int kPairs>
__device__ __forceinline__ RopeAngles<kPairs> rope_angles(const QkvLayout& l, int32_t position,
                                                          const float* inv_freq, int lane) {
  RopeAngles<kPairs> r{};
  const int half = l.rot_dim / 2;
  const float pos = static_cast<float>(position);
#pragma unroll
  for (int j = 0; j < kPairs; ++j) {
    const int e = lane + 32 * j;
    if (e >= half) break;
    float s, c;
    sincosf(__fmul_rn(pos, inv_freq[e]), &s, &c);
    r.cos[j] = __fmul_rn(c, l.attention_factor);
    r.sin[j] = __fmul_rn(s, l.attention_factor);
  }
  return r;
}

// The arithmetic below is spelled out in rounding intrinsics, which the compiler neither
// contracts into fmas nor reorders. Left to itself it may turn x0 * c - x1 * s into either
// of two fmas, and may choose differently in the two kernels that inline these helpers: an
// H100 run found the fused decode attention's output and new keys differing from
// split_rope_write_kv's in the last bits (tools/device/NOTES.md, twentieth run); with the
// intrinsics CudaAttention.DecodeAttentionFromQkvIsTheComposition passes (twenty-first).

// row (head_dim floats, in shared memory, written by this warp and __syncwarp'ed) times
// rsqrt(mean square + eps) times weight, in place; __syncwarp'ed after.
__device__ __forceinline__ void norm_head_row(float* row, int head_dim, const float* weight, float eps, int lane) {
  float sum = 0.0f;
  for (int i = lane; i < head_dim; i += 32) sum = __fmaf_rn(row[i], row[i], sum);
  for (int o = 16; o > 0; o /= 2) sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, o));
  const float inv = rsqrtf(__fadd_rn(__fdiv_rn(sum, static_cast<float>(head_dim)), eps));
  __syncwarp();
  for (int i = lane; i < head_dim; i += 32) row[i] = __fmul_rn(__fmul_rn(row[i], inv), weight[i]);
  __syncwarp();
}

// The rotated row, dimension by dimension: write(i, value) for every i < head_dim, each lane
// its own pairs (so write may store into row itself). Past rot_dim, dimensions pass as they
// are.
template <int kPairs, class Write>
__device__ __forceinline__ void rotate_head_row(const float* row, const QkvLayout& l, const RopeAngles<kPairs>& r,
                                                int lane, Write write) {
  const int half = l.rot_dim / 2;
#pragma unroll
  for (int j = 0; j < kPairs; ++j) {
    const int e = lane + 32 * j;
    if (e >= l.head_dim / 2) break;
    if (e >= half) {  // past rot_dim: two unrotated dimensions
      const int i = l.rot_dim + 2 * (e - half);
      write(i, row[i]);
      write(i + 1, row[i + 1]);
      continue;
    }
    const int a = l.neox ? e : 2 * e;
    const int b = l.neox ? e + half : 2 * e + 1;
    const float x0 = row[a], x1 = row[b];
    write(a, __fsub_rn(__fmul_rn(x0, r.cos[j]), __fmul_rn(x1, r.sin[j])));
    write(b, __fadd_rn(__fmul_rn(x1, r.cos[j]), __fmul_rn(x0, r.sin[j])));
  }
}

}  // namespace pagoda::cuda
