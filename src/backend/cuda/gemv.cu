// Skinny matmuls (decode: a few rows of x against a whole weight) as a streaming GEMV: each
// warp owns output features and reads its weight rows once with 16-byte loads, several in
// flight per lane, dotting them with every row of x (BF16, L1/L2-resident) in F32. cuBLASLt
// runs these shapes well under the memory bandwidth (a [6144 x 4096] weight at ~2 TB/s on
// the H200); a batch-1 decode step is nothing but them.
#include <cstdint>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"

namespace pagoda::cuda {

namespace {

constexpr int kWarps = 8;     // warps a block: one output feature each at a time
constexpr int kUnroll = 4;    // 16-byte weight loads in flight per lane

__device__ void accumulate(const uint4& w, const uint4& x, float& acc) {
  const auto* wp = reinterpret_cast<const __nv_bfloat162*>(&w);
  const auto* xp = reinterpret_cast<const __nv_bfloat162*>(&x);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 wf = __bfloat1622float2(wp[i]), xf = __bfloat1622float2(xp[i]);
    acc = fmaf(wf.x, xf.x, acc);
    acc = fmaf(wf.y, xf.y, acc);
  }
}

// out[r, j] = sum_i x[r, i] w[j, i] for r < kRows. k % 8 == 0; rows 16-byte aligned.
template <int kRows>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const __nv_bfloat16* x, int64_t k, const __nv_bfloat16* w,
                                                           int64_t m, float* out) {
  const int lane = threadIdx.x % 32;
  const int64_t chunks = k / 8;  // 8 BF16 a chunk: one uint4
  for (int64_t j = blockIdx.x * int64_t{kWarps} + threadIdx.x / 32; j < m; j += int64_t{gridDim.x} * kWarps) {
    const uint4* wrow = reinterpret_cast<const uint4*>(w + j * k);
    float acc[kRows] = {};
    int64_t c = lane;
    for (; c + 32 * (kUnroll - 1) < chunks; c += 32 * kUnroll) {
      uint4 wv[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) wv[u] = __ldg(wrow + c + 32 * u);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          accumulate(wv[u], __ldg(reinterpret_cast<const uint4*>(x + r * k) + c + 32 * u), acc[r]);
        }
      }
    }
    for (; c < chunks; c += 32) {
      const uint4 wv = __ldg(wrow + c);
#pragma unroll
      for (int r = 0; r < kRows; ++r) accumulate(wv, __ldg(reinterpret_cast<const uint4*>(x + r * k) + c), acc[r]);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float v = acc[r];
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
      if (lane == 0) out[r * m + j] = v;
    }
  }
}

template <int kRows>
void launch_gemv(const __nv_bfloat16* x, int64_t k, const __nv_bfloat16* w, int64_t m, float* out,
                 cudaStream_t stream) {
  const int64_t blocks = (m + kWarps - 1) / kWarps;
  gemv_kernel<kRows><<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), kWarps * 32, 0, stream>>>(x, k, w, m, out);
}

}  // namespace

bool gemv_fits(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return n >= 1 && n <= kMaxGemvRows && k % 8 == 0 && k > 0 && aligned(x) && aligned(w);
}

void gemv(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out,
          cudaStream_t stream) {
  PAGODA_CHECK(gemv_fits(x, n, k, w));
  switch (n) {
    case 1: launch_gemv<1>(x, k, w, m, out, stream); break;
    case 2: launch_gemv<2>(x, k, w, m, out, stream); break;
    case 3: launch_gemv<3>(x, k, w, m, out, stream); break;
    default: launch_gemv<4>(x, k, w, m, out, stream); break;
  }
  check_launch("gemv");
}

}  // namespace pagoda::cuda
