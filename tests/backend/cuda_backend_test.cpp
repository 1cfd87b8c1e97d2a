// The CUDA backend against the CPU backend, op by op, on random inputs: both get the same
// values (weights already BF16-representable, so that the GPU's BF16 rounding of
// activations for the GEMM is exact and only summation order differs). Skipped where no
// GPU is visible (CI); run on the device machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "core/half.h"
#include "cuda_test_util.h"

namespace pagoda {
namespace {

using namespace test;

TEST(CudaBackend, RmsNormAndElementwiseMatchCpu) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  std::mt19937 rng(1);
  for (const int64_t dim : {6, 64, 576, 1000, 4096, 5000, 8190, 12288}) {
    const int64_t rows = 7;
    const auto x = random_values(rng, size_t(rows * dim), 3.0f);
    const auto w = random_values(rng, size_t(dim));
    const Tensor wc = cpu->upload(Tensor::view(DType::F32, {dim}, w.data()));
    const Tensor wg = gpu->upload(Tensor::view(DType::F32, {dim}, w.data()));
    Tensor xc = on(*cpu, x, {rows, dim}), xg = on(*gpu, x, {rows, dim});
    Tensor oc = cpu->alloc(DType::F32, {rows, dim}), og = gpu->alloc(DType::F32, {rows, dim});
    cpu->rms_norm(xc, wc, 1e-6f, oc);
    gpu->rms_norm(xg, wg, 1e-6f, og);
    EXPECT_LT(relative_error(back(*gpu, og), back(*cpu, oc)), 1e-6) << "rms_norm dim " << dim;

    cpu->add_bias(xc, wc);
    gpu->add_bias(xg, wg);
    cpu->add(xc, oc);
    gpu->add(xg, og);
    cpu->scale(xc, 0.37f);
    gpu->scale(xg, 0.37f);
    cpu->softcap(xc, 2.5f);
    gpu->softcap(xg, 2.5f);
    EXPECT_LT(relative_error(back(*gpu, xg), back(*cpu, xc)), 1e-6) << "bias/add/scale/softcap dim " << dim;

    cpu->silu_mul(xc, oc, oc);
    gpu->silu_mul(xg, og, og);
    EXPECT_LT(relative_error(back(*gpu, og), back(*cpu, oc)), 1e-6) << "silu_mul dim " << dim;
    cpu->gelu_mul(oc, xc, xc);
    gpu->gelu_mul(og, xg, xg);
    EXPECT_LT(relative_error(back(*gpu, xg), back(*cpu, xc)), 1e-6) << "gelu_mul dim " << dim;
  }
}

TEST(CudaBackend, RopeMatchesCpuInEveryLayout) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  std::mt19937 rng(2);
  for (const bool neox : {true, false}) {
    for (const int64_t head_dim : {64, 128, 256}) {
      const int rot_dim = head_dim == 128 ? 64 : static_cast<int>(head_dim);  // partial rotation too
      std::vector<float> inv_freq(size_t(rot_dim / 2));
      for (int i = 0; i < rot_dim / 2; ++i) inv_freq[size_t(i)] = std::pow(10000.0f, -2.0f * i / rot_dim);
      const int64_t tokens = 19, heads = 5;
      std::vector<int32_t> positions(tokens);
      for (auto& p : positions) p = std::uniform_int_distribution<int32_t>(0, 8000)(rng);
      RopeConfig config{inv_freq.data(), rot_dim, neox, neox ? 1.0f : 1.2f};
      const auto x = random_values(rng, size_t(tokens * heads * head_dim));
      Tensor xc = on(*cpu, x, {tokens, heads, head_dim}), xg = on(*gpu, x, {tokens, heads, head_dim});
      cpu->rope(xc, positions.data(), config);
      gpu->rope(xg, positions.data(), config);
      EXPECT_LT(relative_error(back(*gpu, xg), back(*cpu, xc)), 1e-5) << "neox " << neox << " head_dim " << head_dim;
    }
  }
}

TEST(CudaBackend, MatmulAndEmbeddingMatchCpuOnBf16Weights) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  std::mt19937 rng(3);
  for (const auto& [m, k] : std::vector<std::pair<int64_t, int64_t>>{{64, 64}, {1536, 576}, {4096, 4096}, {257, 320}, {96, 14336}, {100, 200}, {33, 36}}) {
    const auto w = bf16_values(rng, size_t(m * k), 0.05f);
    std::vector<uint16_t> w16(w.size());
    for (size_t i = 0; i < w.size(); ++i) w16[i] = f32_to_bf16(w[i]);
    const Tensor host_w = Tensor::view(DType::BF16, {m, k}, w16.data());
    const Tensor wc = cpu->upload(host_w), wg = gpu->upload(host_w);
    // n <= 4 takes the GEMV (gemv.cu) where k is a multiple of 8; the rest cuBLASLt.
    for (const int64_t n : {1, 2, 3, 4, 5, 17, 128}) {
      const auto x = bf16_values(rng, size_t(n * k));
      Tensor xc = on(*cpu, x, {n, k}), xg = on(*gpu, x, {n, k});
      Tensor oc = cpu->alloc(DType::F32, {n, m}), og = gpu->alloc(DType::F32, {n, m});
      cpu->matmul(xc, wc, oc);
      gpu->matmul(xg, wg, og);
      EXPECT_LT(relative_error(back(*gpu, og), back(*cpu, oc)), 1e-5) << m << "x" << k << " n " << n;
    }
    // One input, two matmuls (the GPU converts it to BF16 once), an in-place op on it (the
    // copy must be redone), a third matmul.
    {
      const auto x = bf16_values(rng, size_t(5 * k));
      Tensor xc = on(*cpu, x, {5, k}), xg = on(*gpu, x, {5, k});
      Tensor oc1 = cpu->alloc(DType::F32, {5, m}), og1 = gpu->alloc(DType::F32, {5, m});
      Tensor oc2 = cpu->alloc(DType::F32, {5, m}), og2 = gpu->alloc(DType::F32, {5, m});
      cpu->matmul(xc, wc, oc1);
      gpu->matmul(xg, wg, og1);
      cpu->matmul(xc, wc, oc2);
      gpu->matmul(xg, wg, og2);
      EXPECT_EQ(back(*gpu, og1), back(*gpu, og2));
      cpu->scale(xc, 0.5f);  // exact in BF16
      gpu->scale(xg, 0.5f);
      cpu->matmul(xc, wc, oc2);
      gpu->matmul(xg, wg, og2);
      EXPECT_LT(relative_error(back(*gpu, og2), back(*cpu, oc2)), 1e-5) << "after an in-place op on the input";
    }
    // The weight as an embedding table: rows come back exactly.
    std::vector<int32_t> ids = {0, static_cast<int32_t>(m - 1), 5, 5, 17};
    Tensor ec = cpu->alloc(DType::F32, {5, k}), eg = gpu->alloc(DType::F32, {5, k});
    cpu->embedding(wc, ids.data(), 5, ec);
    gpu->embedding(wg, ids.data(), 5, eg);
    EXPECT_EQ(back(*gpu, eg), back(*cpu, ec));
    ids[2] = static_cast<int32_t>(m);
    EXPECT_THROW(gpu->embedding(wg, ids.data(), 5, eg), Error);
  }
}

// The stacked projections (what the decoder runs on CUDA) against the CPU's separate ones:
// one matmul over q/k/v stacked, its bias, the split; gate/up stacked into silu and gelu.
TEST(CudaBackend, StackedProjectionsMatchSeparateOnesOnCpu) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  std::mt19937 rng(11);
  const int64_t n = 5, k = 256, qr = 256, kvr = 64, ff4 = 384;
  const auto wq = bf16_values(rng, size_t(qr * k), 0.05f), wk = bf16_values(rng, size_t(kvr * k), 0.05f),
             wv = bf16_values(rng, size_t(kvr * k), 0.05f);
  const auto bq = random_values(rng, size_t(qr)), bk = random_values(rng, size_t(kvr)),
             bv = random_values(rng, size_t(kvr));
  const Tensor hq = Tensor::view(DType::F32, {qr, k}, wq.data()), hk = Tensor::view(DType::F32, {kvr, k}, wk.data()),
               hv = Tensor::view(DType::F32, {kvr, k}, wv.data());
  const Tensor hbq = Tensor::view(DType::F32, {qr}, bq.data()), hbk = Tensor::view(DType::F32, {kvr}, bk.data()),
               hbv = Tensor::view(DType::F32, {kvr}, bv.data());
  const Tensor* qkv_parts[] = {&hq, &hk, &hv};
  const Tensor* bias_parts[] = {&hbq, &hbk, &hbv};
  const std::optional<Tensor> qkv = gpu->upload_stacked(qkv_parts);
  const std::optional<Tensor> qkv_bias = gpu->upload_stacked(bias_parts);
  ASSERT_TRUE(qkv && qkv_bias);
  ASSERT_EQ(qkv->shape(), (Shape{qr + 2 * kvr, k}));
  const auto x = random_values(rng, size_t(n * k));
  Tensor xg = on(*gpu, x, {n, k}), xc = on(*cpu, x, {n, k});
  Tensor fused = gpu->alloc(DType::F32, {n, qr + 2 * kvr});
  gpu->matmul(xg, *qkv, fused);
  gpu->add_bias(fused, *qkv_bias);
  Tensor qg = gpu->alloc(DType::F32, {n, qr}), kg = gpu->alloc(DType::F32, {n, kvr}), vg = gpu->alloc(DType::F32, {n, kvr});
  Tensor* outs[] = {&qg, &kg, &vg};
  gpu->split_columns(fused, outs);
  const Tensor* hosts[] = {&hq, &hk, &hv};
  const Tensor* biases[] = {&hbq, &hbk, &hbv};
  for (int i = 0; i < 3; ++i) {
    const Tensor wc = cpu->upload(*hosts[i]);
    const Tensor bc = cpu->upload(*biases[i]);
    Tensor oc = cpu->alloc(DType::F32, {n, hosts[i]->dim(0)});
    cpu->matmul(xc, wc, oc);
    cpu->add_bias(oc, bc);
    EXPECT_LT(relative_error(back(*gpu, *outs[i]), back(*cpu, oc)), 1e-2) << "part " << i;
  }

  // Widths that are not multiples of 4 take the scalar path.
  const auto odd = random_values(rng, size_t(n * 10));
  Tensor oddg = on(*gpu, odd, {n, 10});
  Tensor a = gpu->alloc(DType::F32, {n, 6}), b = gpu->alloc(DType::F32, {n, 3}), c = gpu->alloc(DType::F32, {n, 1});
  Tensor* odd_parts[] = {&a, &b, &c};
  gpu->split_columns(oddg, odd_parts);
  const std::vector<float> a_back = back(*gpu, a), b_back = back(*gpu, b), c_back = back(*gpu, c);
  EXPECT_EQ(test::first_split_mismatch(odd, n, a_back, b_back, c_back), -1);

  for (const int64_t ff : {ff4, ff4 - 1}) {
    const auto gu = random_values(rng, size_t(n * 2 * ff), 3.0f);
    std::vector<float> gate(size_t(n * ff)), up(size_t(n * ff));
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t j = 0; j < ff; ++j) {
        gate[size_t(r * ff + j)] = gu[size_t(r * 2 * ff + j)];
        up[size_t(r * ff + j)] = gu[size_t(r * 2 * ff + ff + j)];
      }
    }
    Tensor gug = on(*gpu, gu, {n, 2 * ff});
    Tensor gc = on(*cpu, gate, {n, ff}), uc = on(*cpu, up, {n, ff});
    for (const bool gelu : {false, true}) {
      Tensor og = gpu->alloc(DType::F32, {n, ff}), oc = cpu->alloc(DType::F32, {n, ff});
      if (gelu) {
        gpu->gelu_mul_stacked(gug, og);
        cpu->gelu_mul(gc, uc, oc);
      } else {
        gpu->silu_mul_stacked(gug, og);
        cpu->silu_mul(gc, uc, oc);
      }
      EXPECT_LT(relative_error(back(*gpu, og), back(*cpu, oc)), 1e-5) << (gelu ? "gelu" : "silu") << " d " << ff;
    }
  }
}

// Norms and gated activations hand the next matmul a BF16 copy of their output: the
// matmul must see exactly what they wrote (here already BF16-representable, so exact vs CPU
// up to summation order, as in MatmulAndEmbeddingMatchCpuOnBf16Weights).
TEST(CudaBackend, MatmulAfterNormAndActivationReadsTheirOutput) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  std::mt19937 rng(6);
  const int64_t n = 9, k = 576, m = 1536;
  const auto w = bf16_values(rng, size_t(m * k), 0.05f);
  const Tensor wc = cpu->upload(Tensor::view(DType::F32, {m, k}, w.data()));
  const Tensor wg = gpu->upload(Tensor::view(DType::F32, {m, k}, w.data()));
  const Tensor w2c = cpu->upload(Tensor::view(DType::F32, {k, m}, w.data()));
  const Tensor w2g = gpu->upload(Tensor::view(DType::F32, {k, m}, w.data()));
  const std::vector<float> ones(size_t(k), 1.0f);
  const Tensor nc = cpu->upload(Tensor::view(DType::F32, {k}, ones.data()));
  const Tensor ng = gpu->upload(Tensor::view(DType::F32, {k}, ones.data()));
  const auto x = random_values(rng, size_t(n * k));
  Tensor xc = on(*cpu, x, {n, k}), xg = on(*gpu, x, {n, k});
  cpu->rms_norm(xc, nc, 1e-6f, xc);
  gpu->rms_norm(xg, ng, 1e-6f, xg);
  Tensor hc = cpu->alloc(DType::F32, {n, m}), hg = gpu->alloc(DType::F32, {n, m});
  Tensor uc = cpu->alloc(DType::F32, {n, m}), ug = gpu->alloc(DType::F32, {n, m});
  cpu->matmul(xc, wc, hc);
  gpu->matmul(xg, wg, hg);
  cpu->matmul(xc, wc, uc);
  gpu->matmul(xg, wg, ug);
  // The GPU rounds the norm's output to BF16 for the GEMM; the CPU does not: bf16 tolerance.
  EXPECT_LT(relative_error(back(*gpu, hg), back(*cpu, hc)), 1e-2);
  cpu->silu_mul(hc, uc, hc);
  gpu->silu_mul(hg, ug, hg);
  Tensor dc = cpu->alloc(DType::F32, {n, k}), dg = gpu->alloc(DType::F32, {n, k});
  cpu->matmul(hc, w2c, dc);
  gpu->matmul(hg, w2g, dg);
  EXPECT_LT(relative_error(back(*gpu, dg), back(*cpu, dc)), 2e-2);
  // And the same GPU result as converting the activation afresh (copy_from_host of it).
  const std::vector<float> h_host = back(*gpu, hg);
  Tensor h2 = on(*gpu, h_host, {n, m});
  Tensor d2 = gpu->alloc(DType::F32, {n, k});
  gpu->matmul(h2, w2g, d2);
  EXPECT_EQ(back(*gpu, d2), back(*gpu, dg));
}

// With PAGODA_BATCH_INVARIANT a row's GEMM result does not depend on how many rows share it.
TEST(CudaBackend, BatchInvariantMatmulGivesEveryRowTheSameBits) {
  PAGODA_NEED_GPU();
  std::unique_ptr<Backend> gpu = batch_invariant_gpu();
  std::mt19937 rng(5);
  const int64_t m = 2048, k = 1024;
  const auto w = random_values(rng, size_t(m * k), 0.05f);
  const Tensor wg = gpu->upload(Tensor::view(DType::F32, {m, k}, w.data()));
  const auto x = random_values(rng, size_t(300 * k));
  std::vector<float> first_row_alone;
  for (const int64_t n : {1, 2, 37, 300}) {
    const std::vector<float> xs(x.begin(), x.begin() + n * k);
    Tensor og = gpu->alloc(DType::F32, {n, m});
    gpu->matmul(on(*gpu, xs, {n, k}), wg, og);
    const std::vector<float> out = back(*gpu, og);
    const std::vector<float> row0(out.begin(), out.begin() + m);
    if (first_row_alone.empty()) {
      first_row_alone = row0;
    } else {
      EXPECT_EQ(row0, first_row_alone) << "n = " << n;
    }
  }
}

// prefetch() is a hint: the GEMV that reads the prefetched weight (from L2, on Hopper)
// gives the same bits as without it, for weights larger and smaller than what it fetches and
// of sizes that are not a whole number of 16-byte pieces.
TEST(CudaBackend, PrefetchChangesNoResult) {
  PAGODA_NEED_GPU();
  const std::unique_ptr<Backend> gpu = gpu_with("PAGODA_L2_PREFETCH", "60");  // off by default
  std::mt19937 rng(6);
  // What the prefetch follows: one decode over 100 tokens of a small cache.
  const Tensor cache = gpu->alloc(DType::BF16, {16, 16, 2, 64});
  const std::vector<int32_t> qsl = {0, 1}, seq_lens = {100}, table = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<int64_t> slots = {6 * 16 + 3};
  const AttentionMetadata decode{1, 1, qsl.data(), seq_lens.data(), table.data(), 7, slots.data()};
  for (const auto& [m, k] : std::vector<std::pair<int64_t, int64_t>>{{4096, 4096}, {8192, 4096}, {3, 5}, {1, 8}}) {
    const Tensor wg = random_bf16_weight(*gpu, rng, m, k);
    const Tensor x = on(*gpu, bf16_values(rng, size_t(k)), {1, k});
    Tensor plain = gpu->alloc(DType::F32, {1, m}), prefetched = gpu->alloc(DType::F32, {1, m});
    gpu->matmul(x, wg, plain);
    gpu->prefetch(wg, decode, cache);
    gpu->matmul(x, wg, prefetched);
    EXPECT_EQ(back(*gpu, prefetched), back(*gpu, plain)) << m << " x " << k;
  }
}

TEST(CudaBackend, MemoryInfoAndBadInput) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  const auto mem = gpu->memory_info();
  ASSERT_TRUE(mem.has_value());
  EXPECT_GT(mem->total_bytes, mem->free_bytes / 2);
  EXPECT_FALSE(cpu->memory_info().has_value());
  Tensor x = gpu->alloc(DType::F32, {2, 8});
  Tensor wrong = gpu->alloc(DType::F32, {3, 8});
  EXPECT_THROW(gpu->matmul(x, wrong, x), Error);  // an F32 weight: not uploaded
  EXPECT_THROW(make_backend("tpu"), Error);
}

}  // namespace
}  // namespace pagoda
