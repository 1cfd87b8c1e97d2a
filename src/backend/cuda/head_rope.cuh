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

// The arithmetic below is spelled out in rounding intrinsics, which the compiler neither
// contracts into fmas nor reorders. Left to itself it may turn x0 * c - x1 * s into either
// of two fmas, and may choose differently in the kernels that inline these helpers: an
// H100 run found the fused decode attention's output and new keys differing from
// split_rope_write_kv's in the last bits (tools/device/NOTES.md, twentieth run); with the
// intrinsics CudaAttention.DecodeAttentionFromQkvIsTheComposition passes (twenty-first).
// rope.cu's kernel uses the same two helpers, so every rotation on the GPU has these bits.

// cos and sin of the angle position * inv_freq, times factor.
__device__ __forceinline__ void rope_cos_sin(float position, float inv_freq, float factor, float& c, float& s) {
  sincosf(__fmul_rn(position, inv_freq), &s, &c);
  c = __fmul_rn(c, factor);
  s = __fmul_rn(s, factor);
}

// (x0, x1) rotated by the angle whose (scaled) cos and sin are c and s.
__device__ __forceinline__ float2 rotate_pair(float x0, float x1, float c, float s) {
  return make_float2(__fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s)), __fadd_rn(__fmul_rn(x1, c), __fmul_rn(x0, s)));
}

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
    rope_cos_sin(pos, inv_freq[e], l.attention_factor, r.cos[j], r.sin[j]);
  }
  return r;
}

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
    const float2 rotated = rotate_pair(row[a], row[b], r.cos[j], r.sin[j]);
    write(a, rotated.x);
    write(b, rotated.y);
  }
}

}  // namespace pagoda::cuda
