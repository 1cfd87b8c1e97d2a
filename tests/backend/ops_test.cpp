// The CPU backend's element-wise, normalization, embedding and rope ops against simple
// double-precision references written here, with stated tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/dequant.h"
#include "backend_test_util.h"
#include "fused_matmul_reference.h"
#include "core/error.h"

namespace pagoda {
namespace {

Tensor make(Backend& b, const std::vector<float>& values, Shape shape) {
  Tensor t = b.alloc(DType::F32, std::move(shape));
  PAGODA_CHECK(static_cast<size_t>(t.numel()) == values.size());
  std::memcpy(t.raw(), values.data(), values.size() * sizeof(float));
  return t;
}

std::vector<float> fetch(Backend& b, const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  b.download(t, out.data());
  return out;
}

// Relative tolerance for single f32 formulas: a few ulps of f32 (eps = 1.19e-7).
constexpr double kRel = 1e-6;

void expect_close(const std::vector<float>& got, const std::vector<double>& ref, double rel, double abs_tol,
                  const char* what) {
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], ref[i], rel * std::fabs(ref[i]) + abs_tol) << what << " at " << i;
  }
}

class CpuOps : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend_ = make_cpu_backend(3);
  std::mt19937 rng_{3};
};

TEST_F(CpuOps, RmsNorm) {
  const int64_t rows = 5, dim = 576;
  const std::vector<float> x = test::random_floats(rng_, rows * dim, 3.0f);
  const std::vector<float> w = test::random_floats(rng_, dim);
  std::vector<double> ref(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(x[r * dim + i]) * x[r * dim + i];
    const double inv = 1.0 / std::sqrt(ss / dim + 1e-5);
    for (int64_t i = 0; i < dim; ++i) ref[r * dim + i] = x[r * dim + i] * inv * w[i];
  }
  Tensor xt = make(*backend_, x, {rows, dim});
  const Tensor wt = make(*backend_, w, {dim});
  Tensor out = backend_->alloc(DType::F32, {rows, dim});
  backend_->rms_norm(xt, wt, 1e-5f, out);
  expect_close(fetch(*backend_, out), ref, 4 * kRel, 0, "rms_norm");
  backend_->rms_norm(xt, wt, 1e-5f, xt);  // in place
  expect_close(fetch(*backend_, xt), ref, 4 * kRel, 0, "rms_norm in place");
}

// fused_matmul (Backend's default: the ops one after the other) against the double
// reference for each fusion, then its operand checks.
TEST_F(CpuOps, FusedMatmulNormsGatesAndAccumulates) {
  const int64_t n = 3, k = 96, m = 40;
  const std::vector<float> x = test::random_floats(rng_, n * k, 2.0f);
  const std::vector<float> w = test::random_floats(rng_, m * k, 0.2f);
  const std::vector<float> norm = test::random_floats(rng_, k);
  const Tensor xt = make(*backend_, x, {n, k}), wt = make(*backend_, w, {m, k}), nt = make(*backend_, norm, {k});
  for (const bool with_norm : {false, true}) {
    for (const GatedActivation gated : {GatedActivation::None, GatedActivation::Silu, GatedActivation::GeluTanh}) {
      for (const bool accumulate : {false, true}) {
        test::FusedMatmulCase c{n, k, m, with_norm ? &norm : nullptr, 1e-5f, gated, accumulate};
        const int64_t width = gated == GatedActivation::None ? m : m / 2;
        const std::vector<float> start = test::random_floats(rng_, n * width);
        Tensor out = make(*backend_, start, {n, width});
        MatmulFusion f;
        f.norm = with_norm ? &nt : nullptr;
        f.eps = 1e-5f;
        f.gated = gated;
        f.accumulate = accumulate;
        backend_->fused_matmul(xt, f, wt, out);
        EXPECT_LT(test::relative_error_to(fetch(*backend_, out), test::fused_matmul_reference(c, x, w, start)), 1e-5)
            << "norm " << with_norm << " gated " << int(gated) << " accumulate " << accumulate;
      }
    }
  }
  MatmulFusion gated;
  gated.gated = GatedActivation::Silu;
  Tensor half = backend_->alloc(DType::F32, {n, m / 2}), full = backend_->alloc(DType::F32, {n, m});
  EXPECT_THROW(backend_->fused_matmul(xt, gated, wt, full), Error);  // a gated out is [n, m / 2]
  const Tensor odd = make(*backend_, std::vector<float>(size_t((m - 1) * k), 0.1f), {m - 1, k});
  Tensor odd_out = backend_->alloc(DType::F32, {n, (m - 1) / 2});
  EXPECT_THROW(backend_->fused_matmul(xt, gated, odd, odd_out), Error);  // gate and up need even rows
  MatmulFusion bad_norm;
  const Tensor short_norm = make(*backend_, std::vector<float>(size_t(k - 1), 1.0f), {k - 1});
  bad_norm.norm = &short_norm;
  EXPECT_THROW(backend_->fused_matmul(xt, bad_norm, wt, full), Error);
  const Tensor narrow = make(*backend_, std::vector<float>(size_t(m * (k - 8)), 0.1f), {m, k - 8});
  EXPECT_THROW(backend_->fused_matmul(xt, MatmulFusion{}, narrow, full), Error);
  backend_->fused_matmul(xt, gated, wt, half);  // and the right shapes still work
}

TEST_F(CpuOps, AddBiasAddScale) {
  const int64_t rows = 3, dim = 10000;  // more than one parallel chunk
  const std::vector<float> x = test::random_floats(rng_, rows * dim);
  const std::vector<float> y = test::random_floats(rng_, rows * dim);
  const std::vector<float> bias = test::random_floats(rng_, dim);
  Tensor xt = make(*backend_, x, {rows, dim});
  backend_->add_bias(xt, make(*backend_, bias, {dim}));
  backend_->add(xt, make(*backend_, y, {rows, dim}));
  backend_->scale(xt, 0.25f);
  const std::vector<float> got = fetch(*backend_, xt);
  for (int64_t i = 0; i < rows * dim; ++i) {
    // Each step is one f32 rounding, in this order: exactly reproducible.
    const float ref = ((x[i] + bias[i % dim]) + y[i]) * 0.25f;
    ASSERT_EQ(got[i], ref) << i;
  }
}

TEST_F(CpuOps, Softcap) {
  const int64_t n = 5000;
  const std::vector<float> x = test::random_floats(rng_, n, 100.0f);
  Tensor xt = make(*backend_, x, {n});
  backend_->softcap(xt, 30.0f);
  const std::vector<float> got = fetch(*backend_, xt);
  for (int64_t i = 0; i < n; ++i) {
    const double ref = 30.0 * std::tanh(static_cast<double>(x[i]) / 30.0);
    ASSERT_NEAR(got[i], ref, 1e-5 * 30.0) << i;
    ASSERT_LE(std::fabs(got[i]), 30.0f);
  }
  EXPECT_THROW(backend_->softcap(xt, 0.0f), Error);
}

TEST_F(CpuOps, SiluMulAndGeluMul) {
  const int64_t n = 9000;
  std::vector<float> gate = test::random_floats(rng_, n, 4.0f);
  gate[0] = 0.0f;
  gate[1] = -30.0f;
  gate[2] = 30.0f;
  const std::vector<float> up = test::random_floats(rng_, n);
  std::vector<double> silu(n), gelu(n);
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    silu[i] = g / (1.0 + std::exp(-g)) * up[i];
    gelu[i] = 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g))) * up[i];
  }
  const Tensor gt = make(*backend_, gate, {3, n / 3});
  const Tensor ut = make(*backend_, up, {3, n / 3});
  Tensor out = backend_->alloc(DType::F32, {3, n / 3});
  backend_->silu_mul(gt, ut, out);
  expect_close(fetch(*backend_, out), silu, 8 * kRel, 1e-12, "silu_mul");
  backend_->gelu_mul(gt, ut, out);
  // gelu's 1 + tanh(...) cancels for very negative g: absolute error relative to |g up|.
  const std::vector<float> got = fetch(*backend_, out);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(got[i], gelu[i], 8 * kRel * std::fabs(gelu[i]) + 1e-7 * std::fabs(gate[i] * up[i])) << i;
  }
  Tensor gate_inplace = make(*backend_, gate, {3, n / 3});
  backend_->silu_mul(gate_inplace, ut, gate_inplace);  // out may be gate
  expect_close(fetch(*backend_, gate_inplace), silu, 8 * kRel, 1e-12, "silu_mul in place");
}

// The stacked forms read gate and up from one [rows, 2d] tensor (a stacked gate/up matmul).
TEST_F(CpuOps, StackedSiluMulAndGeluMul) {
  const int64_t rows = 3, d = 3001;
  const std::vector<float> gate_up = test::random_floats(rng_, size_t(rows * 2 * d), 4.0f);
  std::vector<double> silu(size_t(rows * d)), gelu(size_t(rows * d));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < d; ++j) {
      const double g = gate_up[size_t(r * 2 * d + j)], u = gate_up[size_t(r * 2 * d + d + j)];
      silu[size_t(r * d + j)] = g / (1.0 + std::exp(-g)) * u;
      gelu[size_t(r * d + j)] = 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g))) * u;
    }
  }
  const Tensor gu = make(*backend_, gate_up, {rows, 2 * d});
  Tensor out = backend_->alloc(DType::F32, {rows, d});
  backend_->silu_mul_stacked(gu, out);
  expect_close(fetch(*backend_, out), silu, 8 * kRel, 1e-12, "silu_mul_stacked");
  backend_->gelu_mul_stacked(gu, out);
  const std::vector<float> got = fetch(*backend_, out);
  for (int64_t i = 0; i < rows * d; ++i) {
    ASSERT_NEAR(got[size_t(i)], gelu[size_t(i)], 8 * kRel * std::fabs(gelu[size_t(i)]) + 1e-7 * 16) << i;
  }
  Tensor wrong = backend_->alloc(DType::F32, {rows, d + 1});
  EXPECT_THROW(backend_->silu_mul_stacked(gu, wrong), Error);
}

// upload_stacked puts the parts' rows one after another (in their own dtype on the CPU);
// split_columns takes a stacked projection's output apart again.
TEST_F(CpuOps, StackedUploadAndSplitColumns) {
  const int64_t cols = 64;
  std::vector<Tensor> parts;
  std::vector<const Tensor*> ptrs;
  for (const int64_t rows : {5, 2, 2}) {
    parts.push_back(make(*backend_, test::random_floats(rng_, size_t(rows * cols)), {rows, cols}));
  }
  for (const Tensor& p : parts) ptrs.push_back(&p);
  const std::optional<Tensor> stacked = backend_->upload_stacked(ptrs);
  ASSERT_TRUE(stacked.has_value());
  ASSERT_EQ(stacked->shape(), (Shape{9, cols}));
  const std::vector<float> all = fetch(*backend_, *stacked);
  size_t at = 0;
  for (const Tensor& p : parts) {
    const std::vector<float> v = fetch(*backend_, p);
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(all[at + i], v[i]);
    at += v.size();
  }
  // Parts of different dtypes do not stack on the CPU; parts of different widths never do.
  const Tensor bf16 = Tensor::host(DType::BF16, {2, cols});
  const Tensor* mixed[] = {&parts[0], &bf16};
  EXPECT_FALSE(backend_->upload_stacked(mixed).has_value());
  const Tensor narrow = backend_->alloc(DType::F32, {2, cols / 2});
  const Tensor* ragged[] = {&parts[0], &narrow};
  EXPECT_THROW((void)backend_->upload_stacked(ragged), Error);

  const int64_t n = 7;
  const std::vector<float> x = test::random_floats(rng_, size_t(n * 10));
  const Tensor xt = make(*backend_, x, {n, 10});
  Tensor a = backend_->alloc(DType::F32, {n, 6}), b = backend_->alloc(DType::F32, {n, 3}),
         c = backend_->alloc(DType::F32, {n, 1});
  Tensor* outs[] = {&a, &b, &c};
  backend_->split_columns(xt, outs);
  const std::vector<float> av = fetch(*backend_, a), bv = fetch(*backend_, b), cv = fetch(*backend_, c);
  EXPECT_EQ(test::first_split_mismatch(x, n, av, bv, cv), -1);
  Tensor* too_few[] = {&a, &b};
  EXPECT_THROW(backend_->split_columns(xt, too_few), Error);
}

TEST_F(CpuOps, EmbeddingEveryDtypeEveryIsa) {
  const int64_t vocab = 7, dim = 512;
  const int32_t ids[] = {3, 0, 6, 3};
  for (const std::string& isa : test::supported_isas()) {
    auto backend = cpu::make_cpu_backend_for_isa(2, isa.c_str());
    for (DType type : test::kWeightTypes) {
      const std::vector<uint8_t> raw = test::random_weights(rng_, type, vocab * dim);
      std::vector<float> table(static_cast<size_t>(vocab * dim));
      cpu::dequantize_row(type, raw.data(), table.data(), vocab * dim);
      const Tensor t = backend->upload(Tensor::view(type, {vocab, dim}, raw.data()));
      Tensor out = backend->alloc(DType::F32, {4, dim});
      backend->embedding(t, ids, 4, out);
      const std::vector<float> got = fetch(*backend, out);
      for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(0, std::memcmp(got.data() + i * dim, table.data() + ids[i] * dim, dim * sizeof(float)))
            << isa << " " << dtype_name(type) << " row " << i;
      }
    }
  }
  const std::vector<uint8_t> raw(vocab * dim * 4);
  const Tensor t = Tensor::view(DType::F32, {vocab, dim}, raw.data());
  Tensor out = backend_->alloc(DType::F32, {1, dim});
  const int32_t bad = 7;
  EXPECT_THROW(backend_->embedding(t, &bad, 1, out), Error);
}

// HF's rotary embedding in double: angle = pos * inv_freq; neox rotates (i, i + rot/2),
// GPT-J/Meta layout rotates (2i, 2i + 1); dims past rot_dim are untouched.
std::vector<double> rope_ref(const std::vector<float>& x, const std::vector<int32_t>& pos, int64_t heads,
                             int64_t head_dim, const std::vector<float>& inv_freq, int rot_dim, bool neox,
                             float factor) {
  std::vector<double> out(x.begin(), x.end());
  for (size_t t = 0; t < pos.size(); ++t) {
    for (int64_t h = 0; h < heads; ++h) {
      const size_t base = (t * heads + h) * head_dim;
      for (int i = 0; i < rot_dim / 2; ++i) {
        const double angle = static_cast<double>(pos[t]) * inv_freq[i];
        const double c = std::cos(angle) * factor, s = std::sin(angle) * factor;
        const size_t a = base + (neox ? i : 2 * i), b = base + (neox ? i + rot_dim / 2 : 2 * i + 1);
        out[a] = x[a] * c - x[b] * s;
        out[b] = x[b] * c + x[a] * s;
      }
    }
  }
  return out;
}

TEST_F(CpuOps, RopeLayouts) {
  const int64_t heads = 3, head_dim = 64;
  const std::vector<int32_t> pos = {0, 1, 7, 100, 4095};
  for (bool neox : {true, false}) {
    for (int rot_dim : {64, 32}) {
      for (float factor : {1.0f, 1.25f}) {
        std::vector<float> inv_freq(rot_dim / 2);
        for (int i = 0; i < rot_dim / 2; ++i) {
          inv_freq[i] = static_cast<float>(1.0 / std::pow(10000.0, 2.0 * i / rot_dim));
        }
        const std::vector<float> x = test::random_floats(rng_, pos.size() * heads * head_dim);
        Tensor xt = make(*backend_, x, {static_cast<int64_t>(pos.size()), heads, head_dim});
        RopeConfig config;
        config.inv_freq = inv_freq.data();
        config.rot_dim = rot_dim;
        config.neox = neox;
        config.attention_factor = factor;
        backend_->rope(xt, pos.data(), config);
        // The f32 angle pos * inv_freq carries a relative error of 2^-24, i.e. an absolute
        // phase error up to 4095 * 2^-24 = 2.4e-4 rad as in HF's f32 computation.
        expect_close(fetch(*backend_, xt), rope_ref(x, pos, heads, head_dim, inv_freq, rot_dim, neox, factor),
                     0, 1e-3, neox ? "rope neox" : "rope adjacent");
        if (rot_dim < head_dim) {  // unrotated tail is copied bit for bit
          const std::vector<float> got = fetch(*backend_, xt);
          for (size_t r = 0; r < pos.size() * heads; ++r) {
            ASSERT_EQ(0, std::memcmp(&got[r * head_dim + rot_dim], &x[r * head_dim + rot_dim],
                                     (head_dim - rot_dim) * sizeof(float)));
          }
        }
      }
    }
  }
}

TEST_F(CpuOps, RopeSmallPositionsAreTight) {
  // Where the f32 angle is exact (pos * inv_freq with inv_freq = 1, 0.5, ...), f32 cos/sin
  // agree with double to a few ulps.
  const int64_t head_dim = 8;
  const std::vector<float> inv_freq = {1.0f, 0.5f, 0.25f, 0.125f};
  const std::vector<int32_t> pos = {0, 3, 17};
  const std::vector<float> x = test::random_floats(rng_, pos.size() * head_dim);
  Tensor xt = make(*backend_, x, {3, 1, head_dim});
  RopeConfig config;
  config.inv_freq = inv_freq.data();
  config.rot_dim = 8;
  backend_->rope(xt, pos.data(), config);
  expect_close(fetch(*backend_, xt), rope_ref(x, pos, 1, head_dim, inv_freq, 8, true, 1.0f), 0, 1e-6, "rope");
}

TEST_F(CpuOps, RejectsBadShapes) {
  Tensor x = backend_->alloc(DType::F32, {2, 10});
  const Tensor w = backend_->alloc(DType::F32, {3});
  EXPECT_THROW(backend_->rms_norm(x, w, 1e-6f, x), Error);
  const Tensor y = backend_->alloc(DType::F32, {2, 11});
  EXPECT_THROW(backend_->add(x, y), Error);
  Tensor x3 = backend_->alloc(DType::F32, {2, 1, 10});
  const float inv_freq[6] = {};
  RopeConfig config;
  config.inv_freq = inv_freq;
  config.rot_dim = 12;  // > head_dim
  const int32_t pos[2] = {0, 1};
  EXPECT_THROW(backend_->rope(x3, pos, config), Error);
}

}  // namespace
}  // namespace pagoda
