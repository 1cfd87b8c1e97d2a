#include "backend/cpu/norm_act.h"

#include <cmath>

namespace pagoda::cpu {

namespace {

// Element-wise work is cheap: give each thread a sizeable contiguous range.
constexpr int64_t kGrain = 4096;

template <class Fn>
void for_chunks(ThreadPool& pool, int64_t n, Fn fn) {
  const int64_t chunks = (n + kGrain - 1) / kGrain;
  pool.parallel_for(chunks, [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * kGrain;
    const int64_t hi = end * kGrain < n ? end * kGrain : n;
    for (int64_t i = lo; i < hi; ++i) fn(i);
  });
}

}  // namespace

void rms_norm(ThreadPool& pool, const float* x, const float* w, int64_t rows, int64_t dim, float eps,
              float* out) {
  pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * dim;
      float* yr = out + r * dim;
      double sum = 0.0;
      for (int64_t i = 0; i < dim; ++i) sum += static_cast<double>(xr[i]) * xr[i];
      const float variance = static_cast<float>(sum / static_cast<double>(dim));
      const float inv = 1.0f / std::sqrt(variance + eps);
      for (int64_t i = 0; i < dim; ++i) yr[i] = w[i] * (xr[i] * inv);
    }
  });
}

void add_bias(ThreadPool& pool, float* x, const float* bias, int64_t rows, int64_t dim) {
  pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t i = 0; i < dim; ++i) x[r * dim + i] += bias[i];
    }
  });
}

void add(ThreadPool& pool, float* x, const float* y, int64_t n) {
  for_chunks(pool, n, [&](int64_t i) { x[i] += y[i]; });
}

void scale(ThreadPool& pool, float* x, float s, int64_t n) {
  for_chunks(pool, n, [&](int64_t i) { x[i] *= s; });
}

void silu_mul(ThreadPool& pool, const float* gate, const float* up, int64_t n, float* out) {
  for_chunks(pool, n, [&](int64_t i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  });
}

void gelu_mul(ThreadPool& pool, const float* gate, const float* up, int64_t n, float* out) {
  // torch's constants: kBeta = M_SQRT2 * M_2_SQRTPI * 0.5 = sqrt(2 / pi), kKappa = 0.044715.
  const float beta = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5);
  const float kappa = 0.044715f;
  for_chunks(pool, n, [&](int64_t i) {
    const float g = gate[i];
    const float inner = beta * (g + kappa * (g * g * g));
    out[i] = 0.5f * g * (1.0f + std::tanh(inner)) * up[i];
  });
}

}  // namespace pagoda::cpu
