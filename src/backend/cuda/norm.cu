// RMSNorm: one block per row, the sum of squares reduced in F32 through warp shuffles.
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"

namespace pagoda::cuda {

namespace {

constexpr int kThreads = 256;

__device__ float block_sum(float v) {
  __shared__ float partial[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? partial[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;  // every thread holds the total
}

// out_bf16 (may be null) receives a BF16 copy of out: the next matmul's input.
__global__ void rms_norm_kernel(const float* x, const float* weight, float eps, int64_t dim, float* out,
                                __nv_bfloat16* out_bf16) {
  const float* row = x + blockIdx.x * dim;
  float* dst = out + blockIdx.x * dim;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) sum += row[i] * row[i];
  const float inv = rsqrtf(block_sum(sum) / static_cast<float>(dim) + eps);
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) {
    const float v = row[i] * inv * weight[i];
    dst[i] = v;
    if (out_bf16 != nullptr) out_bf16[blockIdx.x * dim + i] = __float2bfloat16_rn(v);
  }
}

}  // namespace

void rms_norm(const float* x, const float* weight, float eps, int64_t rows, int64_t dim, float* out,
              __nv_bfloat16* out_bf16, cudaStream_t stream) {
  if (rows <= 0) return;
  rms_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, weight, eps, dim, out, out_bf16);
  check_launch("rms_norm");
}

}  // namespace pagoda::cuda
