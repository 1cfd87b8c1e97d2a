// Skinny matmuls (decode: a few rows of x against a whole weight) as a streaming GEMV: warps
// own output features and read their weight rows once with 16-byte loads, several in flight
// per lane, dotting them with every row of x (BF16, L1/L2-resident) in F32. cuBLASLt runs
// these shapes well under the memory bandwidth (a [6144 x 4096] weight at ~2 TB/s on the
// H200); a batch-1 decode step is nothing but them.
//
// A weight of a few thousand rows is one partial wave of warps, each waiting on its loads
// round after round, so the bandwidth sags. Two knobs: more loads in flight per lane
// (unroll), and several warps sharing a row (split), each taking every split-th group of
// 32 chunks and the block adding their sums in a fixed order (deterministic).
//
// Launched with programmatic dependent launch (pdl.h): a block requests its first weights
// while the kernel before it (the norm or activation that makes x) finishes.
#include <cstdint>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pdl.h"

namespace pagoda::cuda {

namespace {

constexpr int kWarps = 8;  // warps a block

__device__ __forceinline__ void accumulate(const uint4& w, const uint4& x, float& acc) {
  const auto* wp = reinterpret_cast<const __nv_bfloat162*>(&w);
  const auto* xp = reinterpret_cast<const __nv_bfloat162*>(&x);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 wf = __bfloat1622float2(wp[i]), xf = __bfloat1622float2(xp[i]);
    acc = fmaf(wf.x, xf.x, acc);
    acc = fmaf(wf.y, xf.y, acc);
  }
}

// kUnroll 16-byte weight chunks of row wrow from chunk c on, every kStep-th (zeros past the end).
template <int kUnroll, int64_t kStep>
__device__ __forceinline__ void load_weights(const uint4* wrow, int64_t c, int64_t chunks, uint4 (&dst)[kUnroll]) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int64_t cu = c + kStep * u;
    dst[u] = cu < chunks ? __ldg(wrow + cu) : make_uint4(0, 0, 0, 0);
  }
}

// out[r, j] = sum_i x[r, i] w[j, i] for r < kRows. k % 8 == 0; rows 16-byte aligned. A block
// owns kWarps / kSplit rows at a time; warp part p of a row reads chunks p * 32 + lane,
// + 32 * kSplit, ... Loads run one batch ahead of the arithmetic (two batches of kUnroll
// chunks in registers), and the first batch of the block's first rows is requested before
// pdl_wait: the weights are constant, so they stream in while the kernel that makes x ends.
template <int kRows, int kUnroll, int kSplit>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const __nv_bfloat16* x, int64_t k, const __nv_bfloat16* w,
                                                           int64_t m, float* out) {
  constexpr int kRowsPerBlock = kWarps / kSplit;
  constexpr int64_t kStep = 32 * kSplit;
  constexpr int64_t kBatch = kStep * kUnroll;
  __shared__ float partial[kSplit > 1 ? kWarps : 1][kRows];
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int row_in_block = warp / kSplit, part = warp % kSplit;
  const int64_t chunks = k / 8;  // 8 BF16 a chunk: one uint4
  const int64_t c0 = part * 32 + lane;
  const int64_t first_row = int64_t{blockIdx.x} * kRowsPerBlock;
  pdl_launch_dependents();
  uint4 wv[kUnroll];
  if (first_row + row_in_block < m) {
    load_weights<kUnroll, kStep>(reinterpret_cast<const uint4*>(w + (first_row + row_in_block) * k), c0, chunks, wv);
  }
  pdl_wait();
  for (int64_t j0 = first_row; j0 < m; j0 += int64_t{gridDim.x} * kRowsPerBlock) {
    const int64_t j = j0 + row_in_block;
    float acc[kRows] = {};
    if (j < m) {
      const uint4* wrow = reinterpret_cast<const uint4*>(w + j * k);
      if (j0 != first_row) load_weights<kUnroll, kStep>(wrow, c0, chunks, wv);
      for (int64_t c = c0; c < chunks; c += kBatch) {
        uint4 next[kUnroll];
        const bool more = c + kBatch < chunks;
        if (more) load_weights<kUnroll, kStep>(wrow, c + kBatch, chunks, next);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t cu = c + kStep * u;
          if (cu >= chunks) break;
#pragma unroll
          for (int r = 0; r < kRows; ++r) {
            accumulate(wv[u], __ldg(reinterpret_cast<const uint4*>(x + r * k) + cu), acc[r]);
          }
        }
        if (more) {
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) wv[u] = next[u];
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      for (int offset = 16; offset > 0; offset /= 2) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], offset);
    }
    if constexpr (kSplit == 1) {
      if (lane == 0 && j < m) {
#pragma unroll
        for (int r = 0; r < kRows; ++r) out[r * m + j] = acc[r];
      }
    } else {
      if (lane == 0) {
#pragma unroll
        for (int r = 0; r < kRows; ++r) partial[warp][r] = acc[r];
      }
      __syncthreads();
      if (part == 0 && lane < kRows && j < m) {
        float sum = 0.0f;
#pragma unroll
        for (int p = 0; p < kSplit; ++p) sum += partial[warp + p][lane];
        out[lane * m + j] = sum;
      }
      __syncthreads();  // partial is reused by the next rows
    }
  }
}

template <int kRows, int kUnroll, int kSplit>
void launch(const __nv_bfloat16* x, int64_t k, const __nv_bfloat16* w, int64_t m, float* out, cudaStream_t stream) {
  constexpr int kRowsPerBlock = kWarps / kSplit;
  const int64_t blocks = (m + kRowsPerBlock - 1) / kRowsPerBlock;
  launch_pdl(gemv_kernel<kRows, kUnroll, kSplit>, dim3(static_cast<unsigned>(blocks < 65535 ? blocks : 65535)),
             dim3(kWarps * 32), 0, stream, "gemv", x, k, w, m, out);
}

template <int kRows>
void launch_config(const GemvConfig& config, const __nv_bfloat16* x, int64_t k, const __nv_bfloat16* w, int64_t m,
                   float* out, cudaStream_t stream) {
  const int key = config.unroll * 16 + config.split;
  switch (key) {
    case 4 * 16 + 1: return launch<kRows, 4, 1>(x, k, w, m, out, stream);
    case 4 * 16 + 2: return launch<kRows, 4, 2>(x, k, w, m, out, stream);
    case 4 * 16 + 4: return launch<kRows, 4, 4>(x, k, w, m, out, stream);
    case 8 * 16 + 1: return launch<kRows, 8, 1>(x, k, w, m, out, stream);
    case 8 * 16 + 2: return launch<kRows, 8, 2>(x, k, w, m, out, stream);
    case 8 * 16 + 4: return launch<kRows, 8, 4>(x, k, w, m, out, stream);
    default: fail("gemv: unroll ", config.unroll, " with split ", config.split, " is not built");
  }
}

}  // namespace

bool gemv_fits(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return n >= 1 && n <= kMaxGemvRows && k % 8 == 0 && k > 0 && aligned(x) && aligned(w);
}

GemvConfig gemv_config(int64_t n, int64_t m) {
  // Measured on the H200 over Llama-3.1-8B's weights (tools/device/NOTES.md): one row of x
  // streams best with rows split over 4 warps (2 for the vocabulary-sized lm head); with
  // more rows the arithmetic per weight byte grows and fewer, longer-running warps with
  // more loads in flight do better.
  if (n == 1) return {4, m >= 65536 ? 2 : 4};
  return {8, m >= 16384 ? 1 : 2};
}

void gemv_with(const GemvConfig& config, const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w,
               int64_t m, float* out, cudaStream_t stream) {
  PAGODA_CHECK(gemv_fits(x, n, k, w));
  switch (n) {
    case 1: launch_config<1>(config, x, k, w, m, out, stream); break;
    case 2: launch_config<2>(config, x, k, w, m, out, stream); break;
    case 3: launch_config<3>(config, x, k, w, m, out, stream); break;
    default: launch_config<4>(config, x, k, w, m, out, stream); break;
  }
  check_launch("gemv");
}

void gemv(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out,
          cudaStream_t stream) {
  gemv_with(gemv_config(n, m), x, n, k, w, m, out, stream);
}

}  // namespace pagoda::cuda
