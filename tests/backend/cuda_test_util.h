// Helpers shared by the CUDA backend tests: the two backends, inputs on either, the
// relative error of a result against the CPU's. The tests skip where no GPU is visible (CI)
// and run on the device machine.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "backend_test_util.h"
#include "core/half.h"

namespace pagoda::test {

#define PAGODA_NEED_GPU()                                                   \
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA GPU is visible"

struct Backends {
  std::unique_ptr<Backend> cpu = make_cpu_backend(0);
  std::unique_ptr<Backend> gpu = make_backend("cuda");
};

inline Backends& backends() {
  static Backends b;
  return b;
}

inline std::vector<float> random_values(std::mt19937& rng, size_t n, float scale = 1.0f) {
  return random_floats(rng, n, scale);
}

// Values a BF16 holds exactly.
inline std::vector<float> bf16_values(std::mt19937& rng, size_t n, float scale = 1.0f) {
  std::vector<float> v = random_values(rng, n, scale);
  for (float& x : v) x = bf16_to_f32(f32_to_bf16(x));
  return v;
}

// A random [m, k] weight uploaded as BF16, the dtype the CUDA backend keeps weights in.
inline Tensor random_bf16_weight(Backend& b, std::mt19937& rng, int64_t m, int64_t k) {
  const std::vector<float> w = bf16_values(rng, size_t(m * k), 0.05f);
  std::vector<uint16_t> w16(w.size());
  for (size_t i = 0; i < w.size(); ++i) w16[i] = f32_to_bf16(w[i]);
  return b.upload(Tensor::view(DType::BF16, {m, k}, w16.data()));
}

inline Tensor on(Backend& b, const std::vector<float>& values, Shape shape) {
  Tensor t = b.alloc(DType::F32, std::move(shape));
  b.copy_from_host(values.data(), t);
  return t;
}

inline std::vector<float> back(Backend& b, const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  b.download(t, out.data());
  return out;
}

// ||a - b|| / ||b||.
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

// Another GPU backend, made with one environment setting (the backend reads it once).
inline std::unique_ptr<Backend> gpu_with(const char* name, const char* value) {
  setenv(name, value, 1);
  std::unique_ptr<Backend> gpu = make_backend("cuda");
  unsetenv(name);
  return gpu;
}

// A second GPU backend in batch-invariant mode (PAGODA_BATCH_INVARIANT).
inline std::unique_ptr<Backend> batch_invariant_gpu() { return gpu_with("PAGODA_BATCH_INVARIANT", "1"); }

// Fills every slot of a pair of caches from host values ([num_blocks * block_size, kv_heads,
// head_dim]) through write_kv, which converts to the caches' dtype.
inline void fill_caches(Backend& b, const std::vector<float>& k, const std::vector<float>& v, Tensor& kc, Tensor& vc) {
  const int64_t slots = kc.dim(0) * kc.dim(1);
  std::vector<int64_t> all(static_cast<size_t>(slots));
  std::iota(all.begin(), all.end(), 0);
  AttentionMetadata meta;
  meta.num_tokens = static_cast<int>(slots);
  meta.slot_mapping = all.data();
  const Shape shape = {slots, kc.dim(2), kc.dim(3)};
  b.write_kv(on(b, k, shape), on(b, v, shape), kc, vc, meta);
}

}  // namespace pagoda::test
