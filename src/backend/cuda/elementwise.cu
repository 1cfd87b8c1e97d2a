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

}  // namespace pagoda::cuda
