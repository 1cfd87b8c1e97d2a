// Elementwise kernels: grid-stride loops over n elements, 256 threads a block.
#include <cmath>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"

namespace pagoda::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 16 ? (b > 0 ? b : 1) : 65535 * 16);
}

template <class F>
__global__ void for_each(int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) f(i);
}

template <class F>
void launch(int64_t n, cudaStream_t stream, const char* name, F f) {
  if (n <= 0) return;
  for_each<<<blocks_for(n), kThreads, 0, stream>>>(n, f);
  check_launch(name);
}

}  // namespace

void to_bf16(const float* x, __nv_bfloat16* out, int64_t n, cudaStream_t stream) {
  launch(n, stream, "to_bf16", [=] __device__(int64_t i) { out[i] = __float2bfloat16_rn(x[i]); });
}

void add(float* x, const float* y, int64_t n, cudaStream_t stream) {
  launch(n, stream, "add", [=] __device__(int64_t i) { x[i] += y[i]; });
}

void add_bias(float* x, const float* bias, int64_t rows, int64_t dim, cudaStream_t stream) {
  launch(rows * dim, stream, "add_bias", [=] __device__(int64_t i) { x[i] += bias[i % dim]; });
}

void scale(float* x, float s, int64_t n, cudaStream_t stream) {
  launch(n, stream, "scale", [=] __device__(int64_t i) { x[i] *= s; });
}

void softcap(float* x, float cap, int64_t n, cudaStream_t stream) {
  launch(n, stream, "softcap", [=] __device__(int64_t i) { x[i] = cap * tanhf(x[i] / cap); });
}

void silu_mul(const float* gate, const float* up, float* out, __nv_bfloat16* out_bf16, int64_t n,
              cudaStream_t stream) {
  launch(n, stream, "silu_mul", [=] __device__(int64_t i) {
    const float g = gate[i];
    const float v = g / (1.0f + expf(-g)) * up[i];
    out[i] = v;
    if (out_bf16 != nullptr) out_bf16[i] = __float2bfloat16_rn(v);
  });
}

void gelu_mul(const float* gate, const float* up, float* out, __nv_bfloat16* out_bf16, int64_t n,
              cudaStream_t stream) {
  launch(n, stream, "gelu_mul", [=] __device__(int64_t i) {
    const float g = gate[i];
    const float inner = 0.7978845608028654f * (g + 0.044715f * g * g * g);  // sqrt(2/pi)
    const float v = 0.5f * g * (1.0f + tanhf(inner)) * up[i];
    out[i] = v;
    if (out_bf16 != nullptr) out_bf16[i] = __float2bfloat16_rn(v);
  });
}

void silu_mul_stacked(const float* gate_up, int64_t rows, int64_t d, float* out, __nv_bfloat16* out_bf16,
                      cudaStream_t stream) {
  launch(rows * d, stream, "silu_mul_stacked", [=] __device__(int64_t i) {
    const int64_t r = i / d, j = i - r * d;
    const float g = gate_up[r * 2 * d + j];
    const float v = g / (1.0f + expf(-g)) * gate_up[r * 2 * d + d + j];
    out[i] = v;
    if (out_bf16 != nullptr) out_bf16[i] = __float2bfloat16_rn(v);
  });
}

void gelu_mul_stacked(const float* gate_up, int64_t rows, int64_t d, float* out, __nv_bfloat16* out_bf16,
                      cudaStream_t stream) {
  launch(rows * d, stream, "gelu_mul_stacked", [=] __device__(int64_t i) {
    const int64_t r = i / d, j = i - r * d;
    const float g = gate_up[r * 2 * d + j];
    const float inner = 0.7978845608028654f * (g + 0.044715f * g * g * g);  // sqrt(2/pi)
    const float v = 0.5f * g * (1.0f + tanhf(inner)) * gate_up[r * 2 * d + d + j];
    out[i] = v;
    if (out_bf16 != nullptr) out_bf16[i] = __float2bfloat16_rn(v);
  });
}

void split_columns(const float* x, int64_t rows, const ColumnPart* parts, int num_parts, cudaStream_t stream) {
  PAGODA_CHECK(num_parts > 0 && num_parts <= kMaxColumnParts);
  int64_t cols = 0;
  for (int p = 0; p < num_parts; ++p) cols += parts[p].width;
  ColumnParts all{};
  for (int p = 0; p < num_parts; ++p) all.part[p] = parts[p];
  launch(rows * cols, stream, "split_columns", [=] __device__(int64_t i) {
    const int64_t r = i / cols;
    int64_t c = i - r * cols;
    for (int p = 0; p < num_parts; ++p) {
      if (c < all.part[p].width) {
        all.part[p].out[r * all.part[p].width + c] = x[i];
        return;
      }
      c -= all.part[p].width;
    }
  });
}

}  // namespace pagoda::cuda
