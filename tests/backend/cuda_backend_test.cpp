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
#include "backend_test_util.h"
#include "core/half.h"

namespace pagoda {
namespace {

#define PAGODA_NEED_GPU()                                                   \
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA GPU is visible"

struct Backends {
  std::unique_ptr<Backend> cpu = make_cpu_backend(0);
  std::unique_ptr<Backend> gpu = make_backend("cuda");
};

Backends& backends() {
  static Backends b;
  return b;
}

std::vector<float> random_values(std::mt19937& rng, size_t n, float scale = 1.0f) {
  return test::random_floats(rng, n, scale);
}

// Values a BF16 holds exactly.
std::vector<float> bf16_values(std::mt19937& rng, size_t n, float scale = 1.0f) {
  std::vector<float> v = random_values(rng, n, scale);
  for (float& x : v) x = bf16_to_f32(f32_to_bf16(x));
  return v;
}

Tensor on(Backend& b, const std::vector<float>& values, Shape shape) {
  Tensor t = b.alloc(DType::F32, std::move(shape));
  b.copy_from_host(values.data(), t);
  return t;
}

std::vector<float> back(Backend& b, const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  b.download(t, out.data());
  return out;
}

// ||a - b|| / ||b||.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

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

std::unique_ptr<Backend> batch_invariant_gpu() {
  setenv("PAGODA_BATCH_INVARIANT", "1", 1);
  std::unique_ptr<Backend> gpu = make_backend("cuda");
  unsetenv("PAGODA_BATCH_INVARIANT");
  return gpu;
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

// Ragged batches over scattered paged blocks: a decode, a prefill chunk after cached
// context, and a whole prefill, with GQA, for every supported kind of attention; split
// into partial softmaxes (this small batch does not fill the GPU) and, in batch-invariant
// mode, in one pass.
TEST(CudaBackend, PagedAttentionMatchesCpuOnRaggedBatches) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  std::unique_ptr<Backend> one_pass = batch_invariant_gpu();
  std::mt19937 rng(4);
  struct Case {
    int64_t heads, kv_heads, head_dim;
    int window;
    float softcap;
  };
  for (const Case c : {Case{8, 2, 64, 0, 0.0f}, Case{32, 8, 128, 0, 0.0f}, Case{4, 1, 256, 16, 0.0f},
                       Case{14, 2, 64, 0, 30.0f}, Case{9, 3, 64, 0, 0.0f}}) {
    const int64_t block_size = 16, num_blocks = 40;
    const std::vector<int32_t> seq_lens = {45, 30, 20};
    const std::vector<int32_t> num_new = {1, 7, 20};
    std::vector<int32_t> qsl = {0};
    for (const int32_t q : num_new) qsl.push_back(qsl.back() + q);
    const int num_tokens = qsl.back();
    const int max_blocks = 4;
    std::vector<int32_t> pool(num_blocks - 1);
    std::iota(pool.begin(), pool.end(), 1);
    std::shuffle(pool.begin(), pool.end(), rng);
    std::vector<int32_t> tables(seq_lens.size() * max_blocks);
    for (size_t i = 0; i < tables.size(); ++i) tables[i] = pool[i];
    std::vector<int64_t> slots;
    for (size_t s = 0; s < seq_lens.size(); ++s) {
      for (int32_t p = seq_lens[s] - num_new[s]; p < seq_lens[s]; ++p) {
        slots.push_back(int64_t{tables[s * max_blocks + p / block_size]} * block_size + p % block_size);
      }
    }
    AttentionMetadata meta{num_tokens, 3, qsl.data(), seq_lens.data(), tables.data(), max_blocks, slots.data()};

    const Shape cache_shape = {num_blocks, block_size, c.kv_heads, c.head_dim};
    const auto cache_k = random_values(rng, size_t(num_blocks * block_size * c.kv_heads * c.head_dim));
    const auto cache_v = random_values(rng, cache_k.size());
    Tensor kc = on(*cpu, cache_k, cache_shape), vc = on(*cpu, cache_v, cache_shape);
    Tensor kg = on(*gpu, cache_k, cache_shape), vg = on(*gpu, cache_v, cache_shape);
    const auto k = random_values(rng, size_t(num_tokens * c.kv_heads * c.head_dim));
    const auto v = random_values(rng, k.size());
    const auto q = random_values(rng, size_t(num_tokens * c.heads * c.head_dim));
    const Shape kv_shape = {num_tokens, c.kv_heads, c.head_dim}, q_shape = {num_tokens, c.heads, c.head_dim};
    cpu->write_kv(on(*cpu, k, kv_shape), on(*cpu, v, kv_shape), kc, vc, meta);
    gpu->write_kv(on(*gpu, k, kv_shape), on(*gpu, v, kv_shape), kg, vg, meta);
    EXPECT_EQ(back(*gpu, kg), back(*cpu, kc));
    EXPECT_EQ(back(*gpu, vg), back(*cpu, vc));

    Tensor oc = cpu->alloc(DType::F32, q_shape), og = gpu->alloc(DType::F32, q_shape);
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    cpu->paged_attention(on(*cpu, q, q_shape), kc, vc, meta, scale, c.window, c.softcap, oc);
    gpu->paged_attention(on(*gpu, q, q_shape), kg, vg, meta, scale, c.window, c.softcap, og);
    EXPECT_LT(relative_error(back(*gpu, og), back(*cpu, oc)), 1e-5)
        << "heads " << c.heads << "/" << c.kv_heads << " head_dim " << c.head_dim << " window " << c.window;

    Tensor k1 = on(*one_pass, back(*gpu, kg), cache_shape), v1 = on(*one_pass, back(*gpu, vg), cache_shape);
    Tensor o1 = one_pass->alloc(DType::F32, q_shape);
    one_pass->paged_attention(on(*one_pass, q, q_shape), k1, v1, meta, scale, c.window, c.softcap, o1);
    EXPECT_LT(relative_error(back(*one_pass, o1), back(*cpu, oc)), 1e-5) << "one pass, head_dim " << c.head_dim;
  }
}

// Fills every slot of a pair of caches from host values ([num_blocks * block_size, kv_heads,
// head_dim]) through write_kv, which converts to the caches' dtype.
void fill_caches(Backend& b, const std::vector<float>& k, const std::vector<float>& v, Tensor& kc, Tensor& vc) {
  const int64_t slots = kc.dim(0) * kc.dim(1);
  std::vector<int64_t> all(static_cast<size_t>(slots));
  std::iota(all.begin(), all.end(), 0);
  AttentionMetadata meta;
  meta.num_tokens = static_cast<int>(slots);
  meta.slot_mapping = all.data();
  const Shape shape = {slots, kc.dim(2), kc.dim(3)};
  b.write_kv(on(b, k, shape), on(b, v, shape), kc, vc, meta);
}

// The GPU's own KV dtype (BF16) over long contexts: decodes over 1,000 and 300 keys, prefill
// chunks of 70 and 64 tokens, GQA groups of 4, 2, 7 and 12 (blocks of 6 heads), a sliding
// window, softcapping, head_dim 64 to 256. Cache values are BF16-representable, so the CPU
// (F32 caches) sees the same numbers. In batch-invariant mode each sequence attended alone
// must give the same bits as inside the batch.
TEST(CudaBackend, PagedAttentionOnBf16CachesMatchesCpuOverLongContexts) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  ASSERT_EQ(gpu->kv_cache_dtype(), DType::BF16);
  std::unique_ptr<Backend> one_pass = batch_invariant_gpu();
  std::mt19937 rng(11);
  struct Case {
    int64_t heads, kv_heads, head_dim;
    int window;
    float softcap;
  };
  for (const Case c : {Case{32, 8, 128, 0, 0.0f}, Case{16, 8, 64, 0, 0.0f}, Case{14, 2, 64, 0, 30.0f},
                       Case{4, 1, 256, 100, 0.0f}, Case{12, 1, 96, 0, 0.0f}}) {
    const int64_t block_size = 16, num_blocks = 110;
    const std::vector<int32_t> seq_lens = {1000, 300, 200, 64};
    const std::vector<int32_t> num_new = {1, 1, 70, 64};
    const int num_seqs = static_cast<int>(seq_lens.size());
    std::vector<int32_t> qsl = {0};
    for (const int32_t q : num_new) qsl.push_back(qsl.back() + q);
    const int num_tokens = qsl.back();
    const int max_blocks = 63;
    std::vector<int32_t> pool(num_blocks - 1);
    std::iota(pool.begin(), pool.end(), 1);
    std::shuffle(pool.begin(), pool.end(), rng);
    std::vector<int32_t> tables(seq_lens.size() * max_blocks, 0);
    size_t next = 0;
    for (size_t s = 0; s < seq_lens.size(); ++s) {
      for (int j = 0; j < (seq_lens[s] + block_size - 1) / block_size; ++j) tables[s * max_blocks + j] = pool[next++];
    }
    std::vector<int64_t> slots;
    for (size_t s = 0; s < seq_lens.size(); ++s) {
      for (int32_t p = seq_lens[s] - num_new[s]; p < seq_lens[s]; ++p) {
        slots.push_back(int64_t{tables[s * max_blocks + p / block_size]} * block_size + p % block_size);
      }
    }
    AttentionMetadata meta{num_tokens, num_seqs, qsl.data(), seq_lens.data(), tables.data(), max_blocks, slots.data()};

    const Shape cache_shape = {num_blocks, block_size, c.kv_heads, c.head_dim};
    const auto cache_k = bf16_values(rng, size_t(num_blocks * block_size * c.kv_heads * c.head_dim));
    const auto cache_v = bf16_values(rng, cache_k.size());
    const auto k = bf16_values(rng, size_t(num_tokens * c.kv_heads * c.head_dim));
    const auto v = bf16_values(rng, k.size());
    const auto q = random_values(rng, size_t(num_tokens * c.heads * c.head_dim));
    const Shape kv_shape = {num_tokens, c.kv_heads, c.head_dim}, q_shape = {num_tokens, c.heads, c.head_dim};
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));

    Tensor kc = on(*cpu, cache_k, cache_shape), vc = on(*cpu, cache_v, cache_shape);
    cpu->write_kv(on(*cpu, k, kv_shape), on(*cpu, v, kv_shape), kc, vc, meta);
    Tensor oc = cpu->alloc(DType::F32, q_shape);
    cpu->paged_attention(on(*cpu, q, q_shape), kc, vc, meta, scale, c.window, c.softcap, oc);
    const std::vector<float> expected = back(*cpu, oc);

    for (Backend* b : {gpu.get(), one_pass.get()}) {
      Tensor kg = b->alloc(DType::BF16, cache_shape), vg = b->alloc(DType::BF16, cache_shape);
      fill_caches(*b, cache_k, cache_v, kg, vg);
      b->write_kv(on(*b, k, kv_shape), on(*b, v, kv_shape), kg, vg, meta);
      Tensor og = b->alloc(DType::F32, q_shape);
      b->paged_attention(on(*b, q, q_shape), kg, vg, meta, scale, c.window, c.softcap, og);
      const std::vector<float> got = back(*b, og);
      EXPECT_LT(relative_error(got, expected), 1e-5) << (b == gpu.get() ? "split" : "one pass") << ", heads "
                                                     << c.heads << "/" << c.kv_heads << " head_dim " << c.head_dim;
      if (b != one_pass.get()) continue;
      const int64_t row = c.heads * c.head_dim;
      for (int s = 0; s < num_seqs; ++s) {
        const std::vector<int32_t> alone_qsl = {0, num_new[s]};
        AttentionMetadata alone{num_new[s], 1, alone_qsl.data(), &seq_lens[s], &tables[s * max_blocks], max_blocks,
                                &slots[qsl[s]]};
        const std::vector<float> q_s(q.begin() + qsl[s] * row, q.begin() + qsl[s + 1] * row);
        const Shape shape = {num_new[s], c.heads, c.head_dim};
        Tensor o_s = b->alloc(DType::F32, shape);
        b->paged_attention(on(*b, q_s, shape), kg, vg, alone, scale, c.window, c.softcap, o_s);
        const std::vector<float> in_batch(got.begin() + qsl[s] * row, got.begin() + qsl[s + 1] * row);
        EXPECT_EQ(back(*b, o_s), in_batch) << "sequence " << s << " alone, heads " << c.heads << "/" << c.kv_heads;
      }
    }
  }
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
