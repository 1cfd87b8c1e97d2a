// The per-ISA kernels of the matmul: dequantizing a weight row to f32 and dotting a few
// weight rows against a few activation rows. One table per instruction set (the
// vec_dot_*.cpp files, each compiled with its own flags); isa.cpp picks one at run time.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace pagoda::cpu {

struct VecDotKernels {
  const char* isa;  // "avx512", "avx2" or "portable"
  // dst[0, k) = row of k elements of `type` (not F32: the driver reads F32 in place).
  // Bit-identical to dequantize_row (dequant.h) on every ISA, NaN payloads aside.
  void (*dequant_row)(DType type, const void* src, float* dst, int64_t k);
  // out[i * ldo + j] = sum_c x[i * k + c] * w[j * k + c] for i < nx, j < nw; nw <= kTileRows.
  void (*dot_tile)(const float* x, int nx, const float* w, int nw, int64_t k, float* out,
                   int64_t ldo);
  // out[i * ldo] = dot(x[i * k ..], w_row) for i < nx, w_row a block-quantized row of k
  // elements dequantized block by block into registers: the small-batch (decode) path.
  void (*dot_quant_rows)(DType type, const void* w_row, const float* x, int nx, int64_t k, float* out,
                         int64_t ldo);
};

// Weight rows per dot_tile call: the rows a tile dequantizes once and reuses for all
// activation rows.
inline constexpr int kTileRows = 4;

[[nodiscard]] const VecDotKernels& portable_kernels();
[[nodiscard]] const VecDotKernels& avx2_kernels();
[[nodiscard]] const VecDotKernels& avx512_kernels();

// Whether this machine can run an ISA's kernels ("avx512", "avx2", "portable").
[[nodiscard]] bool isa_supported(const char* isa);
// The kernels for an ISA name; throws Error for an unknown or unsupported one.
[[nodiscard]] const VecDotKernels& kernels_for_isa(const char* isa);
// The best supported ISA, or $PAGODA_CPU_ISA when set (avx512|avx2|portable).
[[nodiscard]] const VecDotKernels& default_kernels();

}  // namespace pagoda::cpu
