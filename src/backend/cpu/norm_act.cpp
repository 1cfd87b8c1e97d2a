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

namespace {

void rms_norm_row(const float* xr, const float* w, int64_t dim, float eps, float* yr) {
  double sum = 0.0;
  for (int64_t i = 0; i < dim; ++i) sum += static_cast<double>(xr[i]) * xr[i];
  const float variance = static_cast<float>(sum / static_cast<double>(dim));
  const float inv = 1.0f / std::sqrt(variance + eps);
  for (int64_t i = 0; i < dim; ++i) yr[i] = w[i] * (xr[i] * inv);
}

}  // namespace

void rms_norm(ThreadPool& pool, const float* x, const float* w, int64_t rows, int64_t dim, float eps,
              float* out) {
  pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) rms_norm_row(x + r * dim, w, dim, eps, out + r * dim);
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

void softcap(ThreadPool& pool, float* x, float cap, int64_t n) {
  for_chunks(pool, n, [&](int64_t i) { x[i] = std::tanh(x[i] / cap) * cap; });
}

namespace {

float silu_times(float g, float u) { return g / (1.0f + std::exp(-g)) * u; }

float gelu_times(float g, float u) {
  // torch's constants: kBeta = M_SQRT2 * M_2_SQRTPI * 0.5 = sqrt(2 / pi), kKappa = 0.044715.
  const float beta = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5);
  const float kappa = 0.044715f;
  const float inner = beta * (g + kappa * (g * g * g));
  return 0.5f * g * (1.0f + std::tanh(inner)) * u;
}

// out[r, j] = act(gate_up[r, j], gate_up[r, d + j]): rows of a stacked gate/up projection.
template <class Act>
void gated_stacked(ThreadPool& pool, const float* gate_up, int64_t rows, int64_t d, float* out, Act act) {
  pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* gate = gate_up + r * 2 * d;
      for (int64_t j = 0; j < d; ++j) out[r * d + j] = act(gate[j], gate[d + j]);
    }
  });
}

}  // namespace

void silu_mul(ThreadPool& pool, const float* gate, const float* up, int64_t n, float* out) {
  for_chunks(pool, n, [&](int64_t i) { out[i] = silu_times(gate[i], up[i]); });
}

void gelu_mul(ThreadPool& pool, const float* gate, const float* up, int64_t n, float* out) {
  for_chunks(pool, n, [&](int64_t i) { out[i] = gelu_times(gate[i], up[i]); });
}

void silu_mul_stacked(ThreadPool& pool, const float* gate_up, int64_t rows, int64_t d, float* out) {
  gated_stacked(pool, gate_up, rows, d, out, silu_times);
}

void gelu_mul_stacked(ThreadPool& pool, const float* gate_up, int64_t rows, int64_t d, float* out) {
  gated_stacked(pool, gate_up, rows, d, out, gelu_times);
}

}  // namespace pagoda::cpu
