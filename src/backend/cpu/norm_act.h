// Row-wise normalization and element-wise kernels of the CPU backend, on raw f32 arrays.
// Each follows the f32 formula of its Hugging Face transformers counterpart.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace pagoda::cpu {

// out[r] = x[r] * (1 / sqrt(mean(x[r]^2) + eps)) * w; the mean is accumulated in double and
// rounded to f32, as torch's f32 mean of a row is (near) correctly rounded. out may be x.
void rms_norm(ThreadPool& pool, const float* x, const float* w, int64_t rows, int64_t dim, float eps,
              float* out);
// x[r, :] += bias for each of rows rows.
void add_bias(ThreadPool& pool, float* x, const float* bias, int64_t rows, int64_t dim);
void add(ThreadPool& pool, float* x, const float* y, int64_t n);
void scale(ThreadPool& pool, float* x, float s, int64_t n);
// x = cap * tanh(x / cap), as transformers applies Gemma's logit softcapping.
void softcap(ThreadPool& pool, float* x, float cap, int64_t n);
// out = silu(gate) * up, silu(g) = g / (1 + exp(-g)). out may be gate.
void silu_mul(ThreadPool& pool, const float* gate, const float* up, int64_t n, float* out);
// out = gelu_tanh(gate) * up with torch's gelu(approximate='tanh'):
// 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))). out may be gate.
void gelu_mul(ThreadPool& pool, const float* gate, const float* up, int64_t n, float* out);
// The same over rows of a stacked gate/up projection: gate_up [rows, 2d] (gate, then up);
// out [rows, d] must not alias gate_up.
void silu_mul_stacked(ThreadPool& pool, const float* gate_up, int64_t rows, int64_t d, float* out);
void gelu_mul_stacked(ThreadPool& pool, const float* gate_up, int64_t rows, int64_t d, float* out);

}  // namespace pagoda::cpu
