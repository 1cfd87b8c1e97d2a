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
//
// A block of the fused norm walks several row groups (its grid is as many blocks as fit at
// once, or GemvConfig's blocks_per_sm a multiprocessor), so that x is normed once a block.
// Then, with `prefetch_rows`, the loads of its next rows' first chunks are issued while the
// last chunks of the current rows are dotted, so a warp has loads in flight across the
// reduction and the store. Neither changes the arithmetic: the same bits. (A grid of as
// many blocks as fit for the unfused kernels too was measured slower in a decode step on an
// H100: 6.33 against 5.76 ms/token; tools/device/NOTES.md.)
//
// gemv_fused takes in the ops a decode step runs around its matmuls, each of which would
// otherwise be a kernel of its own (~5-8 us of launch, ramp and tail for microseconds of
// work): the RMSNorm of x (every block norms the rows into shared memory: a few KB read from
// L2, so the grid is sized to the blocks that fit at once rather than one per row group),
// a gated activation (a block computes gate row i and up row i together and writes
// act(gate) * up), and the residual add (out += product).
#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "backend/cuda/activations.cuh"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/env_settings.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pdl.h"

namespace pagoda::cuda {

namespace {

constexpr int kWarps = 8;  // warps a block
constexpr int kThreads = kWarps * 32;

struct GemvParams {
  const __nv_bfloat16* x;    // [rows, k] BF16 (without the norm)
  const float* x_f32;        // [rows, k] F32, normed into shared memory (kNorm)
  const float* norm_weight;  // [k] (kNorm)
  float eps;
  int64_t k;
  const __nv_bfloat16* w;    // [m, k]; gated: gate rows then up rows
  int64_t m;
  float* out;                // [rows, m]; gated [rows, m / 2]
  __nv_bfloat16* out_bf16;   // gated: a BF16 copy of out (may be null)
  int accumulate;            // out += the result instead of out = it
  GemvGate gate;             // kGated: the activation
  int prefetch_rows;         // load the next row group's first chunks during this one's last
};

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

__device__ __forceinline__ float block_sum(float v, float* warp_sums) {
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = lane < kWarps ? warp_sums[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;  // every thread holds the total
}

// dst [kRows, k] BF16 = rms_norm(x) * weight, row by row; k % 4 == 0. Each thread sums the
// float4s t, t + 256, ... in order, then the block reduces as norm.cu's kernels do.
template <int kRows>
__device__ void norm_rows_into_shared(const GemvParams& p, __nv_bfloat16* dst) {
  __shared__ float warp_sums[kWarps];
  const int64_t groups = p.k / 4;
  const auto* w4 = reinterpret_cast<const float4*>(p.norm_weight);
  for (int r = 0; r < kRows; ++r) {
    const auto* row = reinterpret_cast<const float4*>(p.x_f32 + r * p.k);
    float sum = 0.0f;
    for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
      const float4 v = row[g];
      sum += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
    const float inv = rsqrtf(block_sum(sum, warp_sums) / static_cast<float>(p.k) + p.eps);
    auto* out = reinterpret_cast<__nv_bfloat162*>(dst + r * p.k);
    for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
      const float4 v = row[g], wv = __ldg(w4 + g);
      out[2 * g] = __floats2bfloat162_rn(v.x * inv * wv.x, v.y * inv * wv.y);
      out[2 * g + 1] = __floats2bfloat162_rn(v.z * inv * wv.z, v.w * inv * wv.w);
    }
    __syncthreads();  // warp_sums is reused; the rows are complete before the dot products
  }
}

__device__ __forceinline__ void store(float* dst, float v, int accumulate) { *dst = accumulate ? *dst + v : v; }

// out[r, j] = sum_i x[r, i] w[j, i] for r < kRows. k % 8 == 0; rows 16-byte aligned. A block
// owns kWarps / kSplit rows at a time; warp part p of a row reads chunks p * 32 + lane,
// + 32 * kSplit, ... Loads run one batch ahead of the arithmetic (two batches of kUnroll
// chunks in registers), and the first batch of the block's first rows is requested before
// pdl_wait: the weights are constant, so they stream in while the kernel that makes x ends.
// kGated: the block's rows are taken in pairs, (gate row i, up row i) for the logical rows
// 2i and 2i + 1, and the pair's sums meet in shared memory for the activation.
template <int kRows, int kUnroll, int kSplit, bool kNorm, bool kGated>
__global__ void __launch_bounds__(kThreads) gemv_kernel(const GemvParams p) {
  constexpr int kRowsPerBlock = kWarps / kSplit;
  static_assert(!kGated || kRowsPerBlock % 2 == 0, "a gated block computes whole (gate, up) pairs");
  constexpr int64_t kStep = 32 * kSplit;
  constexpr int64_t kBatch = kStep * kUnroll;
  extern __shared__ uint4 normed_x[];  // kNorm: [kRows, k] BF16
  __shared__ float partial[kSplit > 1 ? kWarps : 1][kRows];
  __shared__ float row_sums[kGated ? kRowsPerBlock : 1][kRows];
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int row_in_block = warp / kSplit, part = warp % kSplit;
  const int64_t k = p.k, m = p.m, half = m / 2;
  const int64_t chunks = k / 8;  // 8 BF16 a chunk: one uint4
  const int64_t c0 = part * 32 + lane;
  const int64_t first_row = int64_t{blockIdx.x} * kRowsPerBlock;
  // The weight row behind logical row j.
  const auto weight_row = [&](int64_t j) {
    return reinterpret_cast<const uint4*>(p.w + (kGated ? ((j & 1) != 0 ? half + j / 2 : j / 2) : j) * k);
  };
  const int64_t row_step = int64_t{gridDim.x} * kRowsPerBlock;  // to the block's next row group
  pdl_launch_dependents();
  uint4 wv[kUnroll];
  if (first_row + row_in_block < m) load_weights<kUnroll, kStep>(weight_row(first_row + row_in_block), c0, chunks, wv);
  pdl_wait();
  if constexpr (kNorm) norm_rows_into_shared<kRows>(p, reinterpret_cast<__nv_bfloat16*>(normed_x));
  const auto* x_global = reinterpret_cast<const uint4*>(p.x);
  for (int64_t j0 = first_row; j0 < m; j0 += row_step) {
    const int64_t j = j0 + row_in_block;
    float acc[kRows] = {};
    if (j < m) {
      const uint4* wrow = weight_row(j);
      // Without prefetch_rows only the first row group's first chunks are loaded ahead.
      if (j0 != first_row && !p.prefetch_rows) load_weights<kUnroll, kStep>(wrow, c0, chunks, wv);
      for (int64_t c = c0; c < chunks; c += kBatch) {
        uint4 next[kUnroll];
        const bool more = c + kBatch < chunks;
        const bool ahead = !more && p.prefetch_rows && j + row_step < m;
        if (more) {
          load_weights<kUnroll, kStep>(wrow, c + kBatch, chunks, next);
        } else if (ahead) {
          load_weights<kUnroll, kStep>(weight_row(j + row_step), c0, chunks, next);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t cu = c + kStep * u;
          if (cu >= chunks) break;
#pragma unroll
          for (int r = 0; r < kRows; ++r) {
            accumulate(wv[u], kNorm ? normed_x[r * chunks + cu] : __ldg(x_global + r * chunks + cu), acc[r]);
          }
        }
        if (more || ahead) {
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) wv[u] = next[u];
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      for (int offset = 16; offset > 0; offset /= 2) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], offset);
    }
    if constexpr (!kGated) {
      if constexpr (kSplit == 1) {
        if (lane == 0 && j < m) {
#pragma unroll
          for (int r = 0; r < kRows; ++r) store(p.out + r * m + j, acc[r], p.accumulate);
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
          for (int q = 0; q < kSplit; ++q) sum += partial[warp + q][lane];
          store(p.out + lane * m + j, sum, p.accumulate);
        }
        __syncthreads();  // partial is reused by the next rows
      }
    } else {
      if constexpr (kSplit == 1) {
        if (lane == 0) {
#pragma unroll
          for (int r = 0; r < kRows; ++r) row_sums[row_in_block][r] = acc[r];
        }
      } else {
        if (lane == 0) {
#pragma unroll
          for (int r = 0; r < kRows; ++r) partial[warp][r] = acc[r];
        }
        __syncthreads();
        if (part == 0 && lane < kRows) {
          float sum = 0.0f;
#pragma unroll
          for (int q = 0; q < kSplit; ++q) sum += partial[warp + q][lane];
          row_sums[row_in_block][lane] = sum;
        }
      }
      __syncthreads();
      const int t = static_cast<int>(threadIdx.x);
      if (t < kRowsPerBlock / 2 * kRows) {
        const int pair = t / kRows, r = t % kRows;
        const int64_t col = j0 / 2 + pair;
        if (col < half) {
          const float g = row_sums[2 * pair][r], u = row_sums[2 * pair + 1][r];
          float v = p.gate == GemvGate::Gelu ? gelu_times(g, u) : silu_times(g, u);
          float* dst = p.out + r * half + col;
          if (p.accumulate) v += *dst;
          *dst = v;
          if (p.out_bf16 != nullptr) p.out_bf16[r * half + col] = __float2bfloat16_rn(v);
        }
      }
      __syncthreads();  // partial and row_sums are reused by the next rows
    }
  }
}

int64_t multiprocessors() {
  thread_local const int64_t count = [] {
    int device = 0, sms = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    return std::max<int64_t>(sms, 1);
  }();
  return count;
}

// Blocks of kernel (with smem bytes of dynamic shared memory) that the GPU holds at once.
template <class Kernel>
int64_t resident_blocks(Kernel kernel, size_t smem) {
  thread_local std::unordered_map<size_t, int64_t> known;  // by smem, for this instantiation
  const auto it = known.find(smem);
  if (it != known.end()) return it->second;
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return known[smem] = std::max<int64_t>(multiprocessors() * per_sm, 1);
}

template <int kRows, int kUnroll, int kSplit, bool kNorm, bool kGated>
void launch(const GemvConfig& config, GemvParams p, cudaStream_t stream) {
  constexpr int kRowsPerBlock = kWarps / kSplit;
  const auto kernel = gemv_kernel<kRows, kUnroll, kSplit, kNorm, kGated>;
  int64_t blocks = std::min<int64_t>((p.m + kRowsPerBlock - 1) / kRowsPerBlock, 65535);
  const size_t smem = kNorm ? size_t{kRows} * static_cast<size_t>(p.k) * 2 : 0;
  // Every block norms x: as many blocks as fit at once (or as asked), each walking many rows.
  if (config.blocks_per_sm > 0) {
    blocks = std::min(blocks, multiprocessors() * config.blocks_per_sm);
  } else if (kNorm) {
    blocks = std::min(blocks, resident_blocks(kernel, smem));
  }
  p.prefetch_rows = config.prefetch_rows ? 1 : 0;
  launch_pdl(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), smem, stream, "gemv", p);
}

template <int kRows, bool kNorm, bool kGated>
void launch_config(const GemvConfig& config, const GemvParams& p, cudaStream_t stream) {
  const int key = config.unroll * 16 + config.split;
  // The fused kernels are built for gemv_config's choices only; the plain one for every
  // configuration (tools/device/kernel_bench.cpp tries them).
  constexpr bool kPlain = !kNorm && !kGated;
  if constexpr (kPlain || kRows == 1) {
    if (key == 4 * 16 + 2) return launch<kRows, 4, 2, kNorm, kGated>(config, p, stream);
    if (key == 4 * 16 + 4) return launch<kRows, 4, 4, kNorm, kGated>(config, p, stream);
  }
  if constexpr (kPlain || kRows > 1) {
    if (key == 8 * 16 + 1) return launch<kRows, 8, 1, kNorm, kGated>(config, p, stream);
    if (key == 8 * 16 + 2) return launch<kRows, 8, 2, kNorm, kGated>(config, p, stream);
  }
  if constexpr (kPlain) {
    if (key == 4 * 16 + 1) return launch<kRows, 4, 1, false, false>(config, p, stream);
    if (key == 8 * 16 + 4) return launch<kRows, 8, 4, false, false>(config, p, stream);
    if (key == 4 * 16 + 8) return launch<kRows, 4, 8, false, false>(config, p, stream);
  }
  fail("gemv: unroll ", config.unroll, " with split ", config.split, " is not built for this fusion");
}

template <bool kNorm, bool kGated>
void launch_rows(const GemvConfig& config, int64_t n, const GemvParams& p, cudaStream_t stream) {
  switch (n) {
    case 1: launch_config<1, kNorm, kGated>(config, p, stream); break;
    case 2: launch_config<2, kNorm, kGated>(config, p, stream); break;
    case 3: launch_config<3, kNorm, kGated>(config, p, stream); break;
    default: launch_config<4, kNorm, kGated>(config, p, stream); break;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool gemv_fits(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w) {
  return n >= 1 && n <= kMaxGemvRows && k % 8 == 0 && k > 0 && aligned16(x) && aligned16(w);
}

namespace {

// gemv_config's settings that a device run compares (tools/device/run.sh ab), read once.
struct GemvTuning {
  bool prefetch_rows = !env_off("PAGODA_GEMV_PREFETCH_ROWS");
  int long_k_split = env_int("PAGODA_GEMV_LONG_K_SPLIT", 8, 4, 8) == 4 ? 4 : 8;
  int norm_blocks_per_sm = env_int("PAGODA_GEMV_NORM_BLOCKS_PER_SM", 0, 0, 64);
};

const GemvTuning& tuning() {
  static const GemvTuning t;
  return t;
}

}  // namespace

GemvConfig gemv_config(int64_t n, int64_t m, int64_t k, bool plain) {
  // Measured over Llama-3.1-8B's weights (tools/device/NOTES.md): one row of x streams
  // best with rows split over 4 warps (2 for the vocabulary-sized lm head, on the H200; 8
  // for the long rows of a down projection, which the plain kernel alone is built for: 47.0
  // against 50.1 us on an H100); with more rows the arithmetic per weight byte grows and
  // fewer, longer-running warps with more loads in flight do better. The row prefetch took
  // the chain of a step's GEMVs from 5.049 to 5.024 ms on an H100; a fused norm's grid
  // beyond what fits at once (8 or 16 blocks a multiprocessor) was slower.
  GemvConfig config{8, m >= 16384 ? 1 : 2};
  if (n == 1) config = {4, m >= 65536 ? 2 : (plain && k >= 8192 ? tuning().long_k_split : 4)};
  config.prefetch_rows = tuning().prefetch_rows;
  if (!plain) config.blocks_per_sm = tuning().norm_blocks_per_sm;
  return config;
}

void gemv_with(const GemvConfig& config, const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w,
               int64_t m, float* out, cudaStream_t stream) {
  PAGODA_CHECK(gemv_fits(x, n, k, w));
  GemvParams p{};
  p.x = x;
  p.k = k;
  p.w = w;
  p.m = m;
  p.out = out;
  launch_rows<false, false>(config, n, p, stream);
  check_launch("gemv");
}

void gemv(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out,
          cudaStream_t stream) {
  gemv_with(gemv_config(n, m, k, true), x, n, k, w, m, out, stream);
}

bool gemv_fused_fits(int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, const GemvFusion& fusion) {
  if (n < 1 || n > kMaxGemvRows || k <= 0 || k % 8 != 0 || !aligned16(w)) return false;
  if (fusion.norm_weight != nullptr) {
    if (!aligned16(fusion.x_f32) || !aligned16(fusion.norm_weight)) return false;
    if (n * k * 2 > kMaxGemvNormedBytes) return false;
  } else if (!aligned16(fusion.x)) {
    return false;
  }
  return fusion.gate == GemvGate::None || m % 2 == 0;
}

void gemv_fused(int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out, const GemvFusion& fusion,
                cudaStream_t stream) {
  const bool plain = fusion.norm_weight == nullptr && fusion.gate == GemvGate::None;
  gemv_fused_with(gemv_config(n, m, k, plain), n, k, w, m, out, fusion, stream);
}

void gemv_fused_with(const GemvConfig& config, int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out,
                     const GemvFusion& fusion, cudaStream_t stream) {
  PAGODA_CHECK(gemv_fused_fits(n, k, w, m, fusion));
  GemvParams p{};
  p.x = fusion.x;
  p.x_f32 = fusion.x_f32;
  p.norm_weight = fusion.norm_weight;
  p.eps = fusion.eps;
  p.k = k;
  p.w = w;
  p.m = m;
  p.out = out;
  p.out_bf16 = fusion.out_bf16;
  p.accumulate = fusion.accumulate ? 1 : 0;
  p.gate = fusion.gate;
  const bool norm = fusion.norm_weight != nullptr, gated = fusion.gate != GemvGate::None;
  if (norm && gated) {
    launch_rows<true, true>(config, n, p, stream);
  } else if (norm) {
    launch_rows<true, false>(config, n, p, stream);
  } else if (gated) {
    launch_rows<false, true>(config, n, p, stream);
  } else {
    launch_rows<false, false>(config, n, p, stream);
  }
  check_launch("gemv");
}

}  // namespace pagoda::cuda
