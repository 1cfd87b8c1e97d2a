// Reductions over one block of kReduceThreads threads, and a float's order as an unsigned
// integer: what the sampler (sampling.cu) and the logprobs (logprobs.cu) kernels share.
#pragma once

#include <cstdint>

namespace pagoda::cuda {

constexpr int kReduceThreads = 1024;
constexpr int kReduceWarps = kReduceThreads / 32;
static_assert(kReduceWarps == 32, "block_reduce's second stage gives each lane one warp's value");

// Orders floats as unsigned integers (negatives reversed), -0 folded onto +0 so that the
// order agrees with float comparison.
__device__ __forceinline__ uint32_t order_key(float f) {
  if (f == 0.0f) f = 0.0f;
  const uint32_t bits = __float_as_uint(f);
  return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}

// Every thread of the block gets op over all threads' v. `scratch` is shared memory of
// kReduceWarps entries, free again when the call returns.
template <class T, class Op>
__device__ T block_reduce(T v, T* scratch, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[lane];  // kReduceWarps == 32: every lane holds one warp's value
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  __syncthreads();
  return v;
}

struct Sum {
  template <class T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct MaxU64 {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a > b ? a : b; }
};
struct MinInt {
  __device__ int operator()(int a, int b) const { return a < b ? a : b; }
};
struct MaxInt {
  __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};

}  // namespace pagoda::cuda
