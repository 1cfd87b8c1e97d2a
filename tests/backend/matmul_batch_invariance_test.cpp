// A row's matmul result must not depend on how many rows share the batch (the engine's
// batch invariance rests on it): every row of an n-row matmul, bit for bit, against the
// same row computed alone (n = 1, the fused decode path), for every dtype and ISA.
#include <gtest/gtest.h>

#include <cstring>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "backend_test_util.h"

namespace pagoda {
namespace {

std::vector<float> run(Backend& backend, const Tensor& w, const float* x, int64_t n, int64_t k, int64_t m) {
  Tensor xt = backend.alloc(DType::F32, {n, k});
  std::memcpy(xt.raw(), x, static_cast<size_t>(n * k) * sizeof(float));
  Tensor out = backend.alloc(DType::F32, {n, m});
  backend.matmul(xt, w, out);
  std::vector<float> got(static_cast<size_t>(n * m));
  backend.download(out, got.data());
  return got;
}

TEST(CpuMatmul, RowResultIndependentOfBatchSize) {
  std::mt19937 rng(11);
  const int64_t k = 512, m = 36;
  std::vector<std::string> mismatches;
  for (const std::string& isa : test::supported_isas()) {
    auto backend = cpu::make_cpu_backend_for_isa(2, isa.c_str());
    for (const DType type : test::kWeightTypes) {
      const std::vector<uint8_t> w_raw = test::random_weights(rng, type, m * k);
      const Tensor w = backend->upload(Tensor::view(type, {m, k}, w_raw.data()));
      for (const int64_t n : {2, 3, 4, 5, 7, 16, 37}) {
        const std::vector<float> x = test::random_floats(rng, static_cast<size_t>(n * k));
        const std::vector<float> batched = run(*backend, w, x.data(), n, k, m);
        for (int64_t i = 0; i < n; ++i) {
          const std::vector<float> alone = run(*backend, w, x.data() + i * k, 1, k, m);
          if (std::memcmp(alone.data(), batched.data() + i * m, static_cast<size_t>(m) * sizeof(float)) != 0) {
            mismatches.push_back(isa + " " + std::string(dtype_info(type).name) + " n=" + std::to_string(n));
            break;
          }
        }
      }
    }
  }
  std::string all;
  for (const std::string& s : mismatches) all += s + "; ";
  EXPECT_TRUE(mismatches.empty()) << all;
}

}  // namespace
}  // namespace pagoda
