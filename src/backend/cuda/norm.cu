// RMSNorm: one block per row, the sum of squares reduced in F32 through warp shuffles. (A
// decode step's norms of the residual stream run inside the GEMV that follows them: gemv.cu.)
#include <cstdint>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pdl.h"

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
  pdl_launch_dependents();
  pdl_wait();
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

// The same for rows of at most kThreads * 4 * kVecs elements, a multiple of 4: each thread
// loads its float4s at once (all in flight together) and keeps them in registers for the
// second pass. A decode step's norms are single rows, where the strided loop above waits
// for one load after another.
template <int kVecs>
__global__ void rms_norm_registers_kernel(const float* x, const float* weight, float eps, int64_t dim, float* out,
                                          __nv_bfloat16* out_bf16) {
  pdl_launch_dependents();
  pdl_wait();
  const int64_t groups = dim / 4;
  const float4* row = reinterpret_cast<const float4*>(x + blockIdx.x * dim);
  float4 v[kVecs];
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < kVecs; ++u) {
    const int64_t g = threadIdx.x + int64_t{u} * kThreads;
    v[u] = g < groups ? row[g] : make_float4(0, 0, 0, 0);
    sum += v[u].x * v[u].x + v[u].y * v[u].y + v[u].z * v[u].z + v[u].w * v[u].w;
  }
  const float inv = rsqrtf(block_sum(sum) / static_cast<float>(dim) + eps);
  const float4* w = reinterpret_cast<const float4*>(weight);
  float4* dst = reinterpret_cast<float4*>(out + blockIdx.x * dim);
#pragma unroll
  for (int u = 0; u < kVecs; ++u) {
    const int64_t g = threadIdx.x + int64_t{u} * kThreads;
    if (g >= groups) break;
    const float4 wv = w[g];
    const float4 o = make_float4(v[u].x * inv * wv.x, v[u].y * inv * wv.y, v[u].z * inv * wv.z, v[u].w * inv * wv.w);
    dst[g] = o;
    if (out_bf16 != nullptr) {
      __nv_bfloat162* b = reinterpret_cast<__nv_bfloat162*>(out_bf16 + blockIdx.x * dim) + 2 * g;
      b[0] = __floats2bfloat162_rn(o.x, o.y);
      b[1] = __floats2bfloat162_rn(o.z, o.w);
    }
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

void rms_norm(const float* x, const float* weight, float eps, int64_t rows, int64_t dim, float* out,
              __nv_bfloat16* out_bf16, cudaStream_t stream) {
  if (rows <= 0) return;
  const unsigned grid = static_cast<unsigned>(rows);
  const bool vec = dim % 4 == 0 && aligned16(x) && aligned16(weight) && aligned16(out) && aligned16(out_bf16);
  const auto registers = [&](auto kernel) {
    launch_pdl(kernel, dim3(grid), dim3(kThreads), 0, stream, "rms_norm", x, weight, eps, dim, out, out_bf16);
  };
  if (vec && dim <= kThreads * 4 * 1) {
    registers(rms_norm_registers_kernel<1>);
  } else if (vec && dim <= kThreads * 4 * 2) {
    registers(rms_norm_registers_kernel<2>);
  } else if (vec && dim <= kThreads * 4 * 4) {
    registers(rms_norm_registers_kernel<4>);
  } else if (vec && dim <= kThreads * 4 * 8) {
    registers(rms_norm_registers_kernel<8>);
  } else {
    launch_pdl(rms_norm_kernel, dim3(grid), dim3(kThreads), 0, stream, "rms_norm", x, weight, eps, dim, out, out_bf16);
  }
}

}  // namespace pagoda::cuda
