// Portable kernels: the reference dequantizer and plain loops the compiler may vectorize
// for the baseline ISA.
#include "backend/cpu/dequant.h"
#include "backend/cpu/vec_dot.h"

#include <vector>

namespace pagoda::cpu {

namespace {

void dot_tile(const float* x, int nx, const float* w, int nw, int64_t k, float* out, int64_t ldo) {
  constexpr int kLanes = 8;  // independent partial sums, so that the loop can vectorize
  for (int i = 0; i < nx; ++i) {
    for (int j = 0; j < nw; ++j) {
      const float* a = x + i * k;
      const float* b = w + j * k;
      float part[kLanes] = {};
      int64_t c = 0;
      for (; c + kLanes <= k; c += kLanes) {
        for (int l = 0; l < kLanes; ++l) part[l] += a[c + l] * b[c + l];
      }
      float sum = 0.0f;
      for (int l = 0; l < kLanes; ++l) sum += part[l];
      for (; c < k; ++c) sum += a[c] * b[c];
      out[i * ldo + j] = sum;
    }
  }
}

void dot_quant_rows(DType type, const void* w_row, const float* x, int nx, int64_t k, float* out, int64_t ldo) {
  thread_local std::vector<float> row;
  row.resize(static_cast<size_t>(k));
  dequantize_row(type, w_row, row.data(), k);
  dot_tile(x, nx, row.data(), 1, k, out, ldo);
}

}  // namespace

const VecDotKernels& portable_kernels() {
  static const VecDotKernels kernels{"portable", dequantize_row, dot_tile, dot_quant_rows};
  return kernels;
}

}  // namespace pagoda::cpu
