// Prints matmul throughput at decode (n = 1) and prefill (n = 128) per ISA and weight type:
// SmolLM2's ffn_up shape (k = 576, m = 1536) and, for K-quants (k must be a multiple of
// 256), Gemma 3 270M's ffn_down (k = 2048, m = 640). Reports only: no time is asserted.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "backend/cpu/cpu_backend.h"
#include "backend_test_util.h"

namespace pagoda {
namespace {

TEST(CpuMatmulBench, SmolLM2Shapes) {
  if (std::getenv("PAGODA_SKIP_SLOW") != nullptr) GTEST_SKIP() << "PAGODA_SKIP_SLOW set";
  struct Shape {
    DType type;
    int64_t k, m;
  };
  const Shape shapes[] = {{DType::F32, 576, 1536},  {DType::F16, 576, 1536},  {DType::Q4_1, 576, 1536},
                          {DType::Q8_0, 576, 1536}, {DType::Q4_K, 2048, 640}, {DType::Q6_K, 2048, 640}};
  std::mt19937 rng(5);
  for (const std::string& isa : test::supported_isas()) {
    const char* threads = std::getenv("PAGODA_BENCH_THREADS");  // default: one per core
    auto backend = cpu::make_cpu_backend_for_isa(threads ? std::atoi(threads) : 0, isa.c_str());
    for (const auto& [type, k, m] : shapes) {
      const std::vector<uint8_t> raw = test::random_weights(rng, type, m * k);
      const Tensor w = Tensor::view(type, {m, k}, raw.data());
      for (int64_t n : {1, 128}) {
        Tensor x = backend->alloc(DType::F32, {n, k});
        Tensor out = backend->alloc(DType::F32, {n, m});
        backend->matmul(x, w, out);  // warm up caches and the pool
        // As many iterations as fit in ~0.1 s (at least 3), so that CI stays fast.
        int iters = 0;
        const auto start = std::chrono::steady_clock::now();
        double secs = 0.0;
        do {
          backend->matmul(x, w, out);
          ++iters;
          secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        } while (secs < 0.1 || iters < 3);
        const double gflops = 2.0 * static_cast<double>(n * m * k) * iters / secs / 1e9;
        std::printf("[bench] threads=%s %-13s %-5s n=%-4lld k=%lld m=%lld  %8.1f us  %7.2f GFLOP/s\n",
                    threads ? threads : "all", backend->name().c_str(), std::string(dtype_name(type)).c_str(), static_cast<long long>(n),
                    static_cast<long long>(k), static_cast<long long>(m), secs / iters * 1e6, gflops);
      }
    }
  }
}

}  // namespace
}  // namespace pagoda
