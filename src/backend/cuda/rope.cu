// Rotary embedding: one thread per (token, head, rotated pair), the angle in F32 as the CPU
// backend computes it (pos * inv_freq), sin/cos at full precision (no fast-math intrinsics).
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/head_rope.cuh"
#include "backend/cuda/kernels.h"

namespace pagoda::cuda {

namespace {

__global__ void rope_kernel(float* x, int64_t total, int64_t heads, int64_t head_dim, const int32_t* positions,
                            const float* inv_freq, int half, bool neox, float factor) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= total) return;
  const int pair = static_cast<int>(i % half);
  const int64_t row = i / half;  // token * heads + head
  const int64_t token = row / heads;
  float c, s;
  rope_cos_sin(static_cast<float>(positions[token]), inv_freq[pair], factor, c, s);
  float* v = x + row * head_dim;
  const int a = neox ? pair : 2 * pair;
  const int b = neox ? pair + half : 2 * pair + 1;
  // head_rope.cuh's helpers, as split_rope_write_kv and the decode attention: the same bits.
  const float2 rotated = rotate_pair(v[a], v[b], c, s);
  v[a] = rotated.x;
  v[b] = rotated.y;
}

}  // namespace

void rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const int32_t* positions,
          const float* inv_freq, int rot_dim, bool neox, float attention_factor, cudaStream_t stream) {
  const int half = rot_dim / 2;
  const int64_t total = tokens * heads * half;
  if (total <= 0) return;
  constexpr int kThreads = 256;
  rope_kernel<<<static_cast<unsigned>((total + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      x, total, heads, head_dim, positions, inv_freq, half, neox, attention_factor);
  check_launch("rope");
}

}  // namespace pagoda::cuda
