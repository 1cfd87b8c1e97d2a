// The CUDA backend's fused_matmul (gemv.cu's fused GEMV for decode-sized rows, the
// composition with cuBLASLt's accumulating epilogue otherwise) against the double reference
// and against the GPU's own unfused ops. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "cuda_test_util.h"
#include "fused_matmul_reference.h"

namespace pagoda {
namespace {

using namespace test;

struct Fusion {
  bool norm;
  GatedActivation gated;
  bool accumulate;
};

// The same result through the GPU's separate ops: what the fused kernel stands for.
std::vector<float> unfused(Backend& gpu, const Tensor& x, const Fusion& f, const Tensor& norm, const Tensor& w,
                           const std::vector<float>& start, Shape out_shape) {
  const int64_t n = x.dim(0), m = w.dim(0);
  Tensor input = x;
  if (f.norm) {
    input = gpu.alloc(DType::F32, x.shape());
    gpu.rms_norm(x, norm, 1e-5f, input);
  }
  Tensor product = gpu.alloc(DType::F32, {n, m});
  gpu.matmul(input, w, product);
  if (f.gated != GatedActivation::None) {
    Tensor activated = gpu.alloc(DType::F32, {n, m / 2});
    if (f.gated == GatedActivation::Silu) {
      gpu.silu_mul_stacked(product, activated);
    } else {
      gpu.gelu_mul_stacked(product, activated);
    }
    product = activated;
  }
  Tensor out = on(gpu, start, std::move(out_shape));
  if (f.accumulate) {
    gpu.add(out, product);
    return back(gpu, out);
  }
  return back(gpu, product);
}

TEST(CudaFusedMatmul, MatchesTheReferenceAndTheUnfusedOps) {
  PAGODA_NEED_GPU();
  auto& gpu = backends().gpu;
  std::mt19937 rng(31);
  const Fusion fusions[] = {{true, GatedActivation::None, false},     {true, GatedActivation::Silu, false},
                            {true, GatedActivation::GeluTanh, false}, {false, GatedActivation::None, true},
                            {false, GatedActivation::Silu, false},    {true, GatedActivation::Silu, true}};
  // k = 14336 at n = 1 norms 28 KB into shared memory; at n >= 2 it exceeds the 47 KB the
  // fused kernel takes and runs the composition. k = 8192 at n = 3 is 48 KB: the whole of a
  // block's shared memory without the kernel's own arrays, so the composition too. n >= 5
  // runs it as well (cuBLASLt). m = 16384 and 65536 take gemv_config's other choices (one
  // warp a row for n >= 2, two for n = 1), as Llama's gate/up (28672) and lm head do.
  for (const auto& [m, k] : std::vector<std::pair<int64_t, int64_t>>{
           {1536, 576}, {512, 4096}, {96, 14336}, {64, 8192}, {258, 320}, {16384, 64}, {65536, 32}}) {
    const auto w = bf16_values(rng, size_t(m * k), 0.05f);
    const Tensor wg = gpu->upload(Tensor::view(DType::F32, {m, k}, w.data()));
    const auto norm = random_values(rng, size_t(k));
    const Tensor ng = gpu->upload(Tensor::view(DType::F32, {k}, norm.data()));
    for (const int64_t n : {1, 2, 3, 4, 5, 17}) {
      const auto x = bf16_values(rng, size_t(n * k), 2.0f);
      const Tensor xg = on(*gpu, x, {n, k});
      for (const Fusion& f : fusions) {
        const int64_t width = f.gated == GatedActivation::None ? m : m / 2;
        const auto start = random_values(rng, size_t(n * width));
        Tensor out = on(*gpu, start, {n, width});
        MatmulFusion fusion;
        fusion.norm = f.norm ? &ng : nullptr;
        fusion.eps = 1e-5f;
        fusion.gated = f.gated;
        fusion.accumulate = f.accumulate;
        gpu->fused_matmul(xg, fusion, wg, out);
        const std::vector<float> got = back(*gpu, out);
        const std::string what = std::to_string(m) + "x" + std::to_string(k) + " n " + std::to_string(n) + " norm " +
                                 std::to_string(f.norm) + " gated " + std::to_string(int(f.gated)) + " accumulate " +
                                 std::to_string(f.accumulate);
        const FusedMatmulCase c{n, k, m, f.norm ? &norm : nullptr, 1e-5f, f.gated, f.accumulate};
        // The GPU rounds the normed input to BF16 for the product; the reference does not.
        EXPECT_LT(relative_error_to(got, fused_matmul_reference(c, x, w, start)), f.norm ? 1e-2 : 1e-5) << what;
        EXPECT_LT(relative_error(got, unfused(*gpu, xg, f, ng, wg, start, {n, width})), 1e-5) << what;
      }
    }
  }
}

// The gated GEMV hands the down projection a BF16 copy of its output: the next matmul must
// read exactly what it wrote, as if converted afresh.
TEST(CudaFusedMatmul, TheGatedOutputsBf16CopyIsWhatTheNextMatmulReads) {
  PAGODA_NEED_GPU();
  auto& gpu = backends().gpu;
  std::mt19937 rng(32);
  const int64_t k = 512, d = 768;
  const auto w = bf16_values(rng, size_t(2 * d * k), 0.05f), down = bf16_values(rng, size_t(k * d), 0.05f);
  const Tensor wg = gpu->upload(Tensor::view(DType::F32, {2 * d, k}, w.data()));
  const Tensor dg = gpu->upload(Tensor::view(DType::F32, {k, d}, down.data()));
  const auto norm = random_values(rng, size_t(k));
  const Tensor ng = gpu->upload(Tensor::view(DType::F32, {k}, norm.data()));
  for (const int64_t n : {1, 3}) {
    const Tensor x = on(*gpu, random_values(rng, size_t(n * k)), {n, k});
    Tensor activated = gpu->alloc(DType::F32, {n, d});
    MatmulFusion fusion;
    fusion.norm = &ng;
    fusion.eps = 1e-5f;
    fusion.gated = GatedActivation::Silu;
    gpu->fused_matmul(x, fusion, wg, activated);
    Tensor out = gpu->alloc(DType::F32, {n, k});
    gpu->matmul(activated, dg, out);
    const Tensor fresh = on(*gpu, back(*gpu, activated), {n, d});
    Tensor expected = gpu->alloc(DType::F32, {n, k});
    gpu->matmul(fresh, dg, expected);
    EXPECT_EQ(back(*gpu, out), back(*gpu, expected)) << "n " << n;
  }
}

}  // namespace
}  // namespace pagoda
