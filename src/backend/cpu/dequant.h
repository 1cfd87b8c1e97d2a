// Scalar dequantization of GGML block formats to f32, the reference every SIMD path and
// the Python `gguf` package (gguf.quants.dequantize) must agree with bit for bit: each
// value is computed with the same f32 operations in the same order as gguf 0.19.0.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace pagoda::cpu {

// Dequantizes n elements (a whole number of blocks of `type`) from src into dst.
// Throws Error for a type that is not a weight format (I32).
void dequantize_row(DType type, const void* src, float* dst, int64_t n);

}  // namespace pagoda::cpu
