// Elementwise kernels: grid-stride loops over n elements, 256 threads a block.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backend/cuda/activations.cuh"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pdl.h"

namespace pagoda::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 16 ? (b > 0 ? b : 1) : 65535 * 16);
}

template <class F>
__global__ void for_each(int64_t n, F f) {
  pdl_launch_dependents();
  pdl_wait();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) f(i);
}

template <class F>
void launch(int64_t n, cudaStream_t stream, const char* name, F f) {
  if (n <= 0) return;
  launch_pdl(for_each<F>, dim3(blocks_for(n)), dim3(kThreads), 0, stream, name, n, f);
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
    const float v = silu_times(gate[i], up[i]);
    out[i] = v;
    if (out_bf16 != nullptr) out_bf16[i] = __float2bfloat16_rn(v);
  });
}

void gelu_mul(const float* gate, const float* up, float* out, __nv_bfloat16* out_bf16, int64_t n,
              cudaStream_t stream) {
  launch(n, stream, "gelu_mul", [=] __device__(int64_t i) {
    const float v = gelu_times(gate[i], up[i]);
    out[i] = v;
    if (out_bf16 != nullptr) out_bf16[i] = __float2bfloat16_rn(v);
  });
}

namespace {

// Row-wise kernels over [rows, width]: blockIdx.y walks rows, threads walk 4-wide column
// groups (float4 loads where the widths allow), so no element pays for an index division.
dim3 row_grid(int64_t rows, int64_t groups) {
  const int64_t x = (groups + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(x > 0 ? x : 1), static_cast<unsigned>(rows < 65535 ? rows : 65535));
}

template <bool kGelu, int kVec>
__global__ void gated_stacked_kernel(const float* gate_up, int64_t rows, int64_t d, float* out,
                                     __nv_bfloat16* out_bf16) {
  pdl_launch_dependents();
  pdl_wait();
  const int64_t groups = d / kVec;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const float* gate = gate_up + r * 2 * d;
    const float* up = gate + d;
    for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups; g += int64_t{gridDim.x} * blockDim.x) {
      float gv[kVec], uv[kVec], v[kVec];
      if constexpr (kVec == 4) {
        const float4 a = reinterpret_cast<const float4*>(gate)[g], b = reinterpret_cast<const float4*>(up)[g];
        gv[0] = a.x, gv[1] = a.y, gv[2] = a.z, gv[3] = a.w;
        uv[0] = b.x, uv[1] = b.y, uv[2] = b.z, uv[3] = b.w;
      } else {
        gv[0] = gate[g], uv[0] = up[g];
      }
      for (int i = 0; i < kVec; ++i) v[i] = kGelu ? gelu_times(gv[i], uv[i]) : silu_times(gv[i], uv[i]);
      float* o = out + r * d + g * kVec;
      for (int i = 0; i < kVec; ++i) o[i] = v[i];
      if (out_bf16 != nullptr) {
        for (int i = 0; i < kVec; ++i) out_bf16[r * d + g * kVec + i] = __float2bfloat16_rn(v[i]);
      }
    }
  }
}

template <bool kGelu>
void gated_stacked(const float* gate_up, int64_t rows, int64_t d, float* out, __nv_bfloat16* out_bf16,
                   cudaStream_t stream, const char* name) {
  if (rows <= 0 || d <= 0) return;
  const bool aligned = reinterpret_cast<uintptr_t>(gate_up) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
  if (d % 4 == 0 && aligned) {
    launch_pdl(gated_stacked_kernel<kGelu, 4>, row_grid(rows, d / 4), dim3(kThreads), 0, stream, name, gate_up, rows, d,
               out, out_bf16);
  } else {
    launch_pdl(gated_stacked_kernel<kGelu, 1>, row_grid(rows, d), dim3(kThreads), 0, stream, name, gate_up, rows, d,
               out, out_bf16);
  }
}

// kVec = 4: every width is a multiple of 4, so each float4 lies inside one part.
template <int kVec>
__global__ void split_columns_kernel(const float* x, int64_t rows, int64_t cols, ColumnParts parts, int num_parts) {
  using Vec = std::conditional_t<kVec == 4, float4, float>;
  const int64_t groups = cols / kVec;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const Vec* src = reinterpret_cast<const Vec*>(x + r * cols);
    for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups; g += int64_t{gridDim.x} * blockDim.x) {
      int64_t c = g * kVec;
      int p = 0;
      while (p + 1 < num_parts && c >= parts.part[p].width) c -= parts.part[p++].width;
      reinterpret_cast<Vec*>(parts.part[p].out + r * parts.part[p].width)[c / kVec] = src[g];
    }
  }
}

}  // namespace

void silu_mul_stacked(const float* gate_up, int64_t rows, int64_t d, float* out, __nv_bfloat16* out_bf16,
                      cudaStream_t stream) {
  gated_stacked<false>(gate_up, rows, d, out, out_bf16, stream, "silu_mul_stacked");
}

void gelu_mul_stacked(const float* gate_up, int64_t rows, int64_t d, float* out, __nv_bfloat16* out_bf16,
                      cudaStream_t stream) {
  gated_stacked<true>(gate_up, rows, d, out, out_bf16, stream, "gelu_mul_stacked");
}

void split_columns(const float* x, int64_t rows, const ColumnPart* parts, int num_parts, cudaStream_t stream) {
  PAGODA_CHECK(num_parts > 0 && num_parts <= kMaxColumnParts);
  int64_t cols = 0;
  bool vec4 = true;
  ColumnParts all{};
  for (int p = 0; p < num_parts; ++p) {
    all.part[p] = parts[p];
    cols += parts[p].width;
    vec4 = vec4 && parts[p].width % 4 == 0 && reinterpret_cast<uintptr_t>(parts[p].out) % 16 == 0;
  }
  vec4 = vec4 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  if (rows <= 0 || cols <= 0) return;
  if (vec4) {
    split_columns_kernel<4><<<row_grid(rows, cols / 4), kThreads, 0, stream>>>(x, rows, cols, all, num_parts);
  } else {
    split_columns_kernel<1><<<row_grid(rows, cols), kThreads, 0, stream>>>(x, rows, cols, all, num_parts);
  }
  check_launch("split_columns");
}

}  // namespace pagoda::cuda
