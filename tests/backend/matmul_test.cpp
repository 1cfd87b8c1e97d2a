// matmul for every weight dtype on every ISA this machine runs, against the reference
// dequantizer followed by a naive double-precision dot product.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/dequant.h"
#include "backend_test_util.h"
#include "core/error.h"

namespace pagoda {
namespace {

struct Case {
  int64_t n, k, m;
};

void check_matmul(Backend& backend, DType type, const Case& c, std::mt19937& rng) {
  const std::vector<uint8_t> w_raw = test::random_weights(rng, type, c.m * c.k);
  const std::vector<float> x = test::random_floats(rng, static_cast<size_t>(c.n * c.k));
  std::vector<float> w(static_cast<size_t>(c.m * c.k));
  cpu::dequantize_row(type, w_raw.data(), w.data(), c.m * c.k);

  const Tensor wt = backend.upload(Tensor::view(type, {c.m, c.k}, w_raw.data()));
  Tensor xt = backend.alloc(DType::F32, {c.n, c.k});
  std::memcpy(xt.raw(), x.data(), x.size() * sizeof(float));
  Tensor out = backend.alloc(DType::F32, {c.n, c.m});
  backend.matmul(xt, wt, out);
  std::vector<float> got(static_cast<size_t>(c.n * c.m));
  backend.download(out, got.data());

  for (int64_t i = 0; i < c.n; ++i) {
    for (int64_t j = 0; j < c.m; ++j) {
      double ref = 0.0, mag = 0.0;
      for (int64_t t = 0; t < c.k; ++t) {
        const double p = static_cast<double>(x[static_cast<size_t>(i * c.k + t)]) * w[static_cast<size_t>(j * c.k + t)];
        ref += p;
        mag += std::fabs(p);
      }
      // Every path sums k / 8 (or k / 16) products per lane in f32, then adds lanes and the
      // tail: a rounding error below (k / 8 + 16) * 2^-24 * sum |x w| (Higham's gamma_n).
      const double tol = (static_cast<double>(c.k) / 8 + 16) * 0x1p-24 * mag;
      ASSERT_NEAR(got[static_cast<size_t>(i * c.m + j)], ref, tol)
          << backend.name() << " " << dtype_name(type) << " n=" << c.n << " k=" << c.k << " m=" << c.m
          << " at (" << i << ", " << j << ")";
    }
  }
}

TEST(CpuMatmul, EveryDtypeEveryIsa) {
  std::mt19937 rng(11);
  for (const std::string& isa : test::supported_isas()) {
    for (int threads : {1, 3}) {
      auto backend = cpu::make_cpu_backend_for_isa(threads, isa.c_str());
      for (DType type : test::kWeightTypes) {
        const int64_t block = dtype_info(type).block_size;
        const int64_t k = block == 1 ? 37 : 2 * block;  // odd k exercises the SIMD tails
        // n <= 4 takes the fused (decode) path for block types, larger n the buffered tiles.
        for (const Case& c : {Case{1, k, 9}, Case{3, k, 6}, Case{4, k, 5}, Case{5, k, 6}, Case{19, k, 13}}) check_matmul(*backend, type, c, rng);
      }
    }
  }
}

TEST(CpuMatmul, LargerShapesSplitAcrossThreads) {
  std::mt19937 rng(12);
  for (const std::string& isa : test::supported_isas()) {
    auto backend = cpu::make_cpu_backend_for_isa(4, isa.c_str());
    // Few weight rows and many activation rows: the batch is split across threads too.
    check_matmul(*backend, DType::Q4_K, {70, 512, 7}, rng);
    check_matmul(*backend, DType::F32, {33, 576, 40}, rng);
    check_matmul(*backend, DType::Q8_0, {2, 576, 130}, rng);
    // 300 x 512 f32 activations (600 KiB) span three L2-sized blocks of rows.
    check_matmul(*backend, DType::Q4_0, {300, 512, 21}, rng);
  }
}

TEST(CpuMatmul, RejectsMismatchedShapes) {
  auto backend = make_cpu_backend(1);
  Tensor x = backend->alloc(DType::F32, {2, 32});
  Tensor w = backend->alloc(DType::Q8_0, {4, 64});
  Tensor out = backend->alloc(DType::F32, {2, 4});
  EXPECT_THROW(backend->matmul(x, w, out), Error);
  Tensor w2 = backend->alloc(DType::Q8_0, {4, 32});
  Tensor bad_out = backend->alloc(DType::F32, {2, 5});
  EXPECT_THROW(backend->matmul(x, w2, bad_out), Error);
  backend->matmul(x, w2, out);  // the right shapes go through
  // 576-element rows are not whole Q4_K blocks, though the whole tensor is.
  Tensor x3 = backend->alloc(DType::F32, {1, 576});
  const std::vector<uint8_t> raw(*dtype_bytes(DType::Q4_K, 4 * 576));
  const Tensor w3 = Tensor::view(DType::Q4_K, {4, 576}, raw.data());
  Tensor out3 = backend->alloc(DType::F32, {1, 4});
  EXPECT_THROW(backend->matmul(x3, w3, out3), Error);
}

TEST(CpuBackend, IsaOverrideAndName) {
  EXPECT_THROW((void)cpu::make_cpu_backend_for_isa(1, "mmx"), Error);
  EXPECT_EQ(cpu::make_cpu_backend_for_isa(1, "portable")->name(), "cpu-portable");
  // $PAGODA_CPU_ISA overrides the automatic choice; a bad value is a clear error.
  const char* saved = std::getenv("PAGODA_CPU_ISA");
  const std::string old = saved ? saved : "";
  setenv("PAGODA_CPU_ISA", "portable", 1);
  EXPECT_EQ(make_cpu_backend(1)->name(), "cpu-portable");
  setenv("PAGODA_CPU_ISA", "avx9000", 1);
  EXPECT_THROW((void)make_cpu_backend(1), Error);
  if (saved) {
    setenv("PAGODA_CPU_ISA", old.c_str(), 1);
  } else {
    unsetenv("PAGODA_CPU_ISA");
  }
  if (cpu::isa_supported("avx512")) {
    EXPECT_EQ(cpu::make_cpu_backend_for_isa(1, "avx512")->name(), "cpu-avx512");
  }
}

}  // namespace
}  // namespace pagoda
