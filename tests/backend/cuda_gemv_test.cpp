// gemv.cu's configurations, called directly: every (unroll, split) a fusion is built for,
// each with its default grid, a grid of a few blocks a multiprocessor walking several row
// groups, and those prefetching their next rows: against the double reference, and the
// grids of one tiling bit for bit (they change where and when a row is computed, not its
// arithmetic). The backend's own choice is covered by
// cuda_fused_matmul_test.cpp. Built with the CUDA backend; skipped where no GPU is visible.
#if PAGODA_HAVE_CUDA
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/kernels.h"
#include "core/half.h"
#include "cuda_test_util.h"
#include "fused_matmul_reference.h"

namespace pagoda {
namespace {

using namespace test;

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, host.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}

// A BF16 copy of v on the device.
__nv_bfloat16* device_bf16(const std::vector<float>& v) {
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = f32_to_bf16(v[i]);
  return reinterpret_cast<__nv_bfloat16*>(device_copy(bits));
}

struct Fusion {
  const char* name;
  bool norm;
  GatedActivation gated;
  bool accumulate;
};

TEST(CudaGemv, EveryTilingAndGridMatchesTheReferenceAndTheGridsAgreeBitForBit) {
  PAGODA_NEED_GPU();
  (void)backends();  // the CUDA context
  std::mt19937 rng(41);
  const Fusion fusions[] = {{"plain", false, GatedActivation::None, false},
                            {"accumulate", false, GatedActivation::None, true},
                            {"norm", true, GatedActivation::None, false},
                            {"norm+silu", true, GatedActivation::Silu, false}};
  const pagoda::cuda::GemvConfig grids[] = {{0, 0, false, 0}, {0, 0, true, 0}, {0, 0, false, 2}, {0, 0, true, 2}};
  // Tens of thousands of rows: many row groups a block when the grid is capped, the
  // last pass partial (m not a multiple of any block's rows). k = 64 leaves most lanes of a
  // split row without chunks; 8200 is a long row with a partial last batch.
  for (const auto& [m, k] : std::vector<std::pair<int64_t, int64_t>>{{20002, 512}, {30000, 64}, {1030, 8200}}) {
    const auto w = bf16_values(rng, size_t(m * k), 0.05f);
    const auto norm = random_values(rng, size_t(k));
    __nv_bfloat16* wd = device_bf16(w);
    float* norm_d = device_copy(norm);
    for (const int64_t n : {1, 3}) {
      const auto x = bf16_values(rng, size_t(n * k), 2.0f);
      __nv_bfloat16* xd = device_bf16(x);
      float* x_f32 = device_copy(x);
      for (const Fusion& f : fusions) {
        const bool plain = !f.norm && f.gated == GatedActivation::None;
        if (f.norm && n * k * 2 > pagoda::cuda::kMaxGemvNormedBytes) continue;
        const int64_t width = f.gated == GatedActivation::None ? m : m / 2;
        const auto start = random_values(rng, size_t(n * width));
        const FusedMatmulCase c{n, k, m, f.norm ? &norm : nullptr, 1e-5f, f.gated, f.accumulate};
        const std::vector<double> expected = fused_matmul_reference(c, x, w, start);
        pagoda::cuda::GemvFusion fusion;
        fusion.x = xd;
        if (f.norm) {
          fusion.x_f32 = x_f32;
          fusion.norm_weight = norm_d;
          fusion.eps = 1e-5f;
        }
        fusion.gate = f.gated == GatedActivation::Silu ? pagoda::cuda::GemvGate::Silu : pagoda::cuda::GemvGate::None;
        fusion.accumulate = f.accumulate;
        // What each fusion is built for (gemv.cu's launch_config).
        std::vector<std::pair<int, int>> tilings = {{8, 1}, {8, 2}};
        if (n == 1) tilings = {{4, 2}, {4, 4}};
        if (plain) tilings = {{4, 1}, {4, 2}, {4, 4}, {4, 8}, {8, 1}, {8, 2}, {8, 4}};
        for (const auto& [unroll, split] : tilings) {
          std::vector<float> first;
          for (const auto& grid : grids) {
            const pagoda::cuda::GemvConfig config{unroll, split, grid.prefetch_rows, grid.blocks_per_sm};
            float* out = device_copy(start);
            pagoda::cuda::gemv_fused_with(config, n, k, wd, m, out, fusion, nullptr);
            std::vector<float> got(start.size());
            ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
            cudaFree(out);
            const std::string what = std::string(f.name) + " " + std::to_string(m) + "x" + std::to_string(k) + " n " +
                                     std::to_string(n) + " unroll " + std::to_string(unroll) + " split " +
                                     std::to_string(split) + " prefetch " + std::to_string(grid.prefetch_rows) +
                                     " blocks a multiprocessor " + std::to_string(grid.blocks_per_sm);
            // The GPU rounds the normed input to BF16 for the product; the reference does not.
            EXPECT_LT(relative_error_to(got, expected), f.norm ? 1e-2 : 1e-5) << what;
            if (first.empty()) {
              first = got;
            } else {
              EXPECT_EQ(got, first) << what;
            }
          }
        }
      }
      cudaFree(xd);
      cudaFree(x_f32);
    }
    cudaFree(wd);
    cudaFree(norm_d);
  }
}

}  // namespace
}  // namespace pagoda
#endif  // PAGODA_HAVE_CUDA
