// The CUDA backend's fused ops against what they stand for: split_rope_write_kv against the
// composition of split_columns, the per-head norms, rope and write_kv (Backend's default, on
// the GPU and on the CPU). (fused_matmul: cuda_fused_matmul_test.cpp.)
// Skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "cuda_test_util.h"

namespace pagoda {
namespace {

using namespace test;

// Llama (no head norms), Qwen3 (q_norm / k_norm), GPT-J's interleaved rotation, a partial
// rotation with an attention factor, head_dim 64 to 256; F32 caches (read back and compared)
// and the GPU's BF16 caches (compared through attention over them).
TEST(CudaFusedOps, SplitRopeWriteKvIsTheComposition) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  std::mt19937 rng(22);
  struct Case {
    int64_t heads, kv_heads, head_dim;
    int rot_dim;
    bool neox, norms;
    float attention_factor;
  };
  for (const Case c : {Case{8, 2, 64, 64, true, false, 1.0f}, Case{16, 8, 128, 128, true, true, 1.0f},
                       Case{6, 6, 64, 64, false, false, 1.0f}, Case{4, 1, 256, 128, true, true, 1.3f},
                       Case{14, 2, 64, 32, false, true, 1.0f}}) {
    const int64_t n = 11, block_size = 16, num_blocks = 8, d = c.head_dim;
    const std::string what = "heads " + std::to_string(c.heads) + "/" + std::to_string(c.kv_heads) + " head_dim " +
                             std::to_string(d) + (c.norms ? " with norms" : "") + (c.neox ? "" : " gpt-j");
    std::vector<float> inv_freq(size_t(c.rot_dim / 2));
    for (int i = 0; i < c.rot_dim / 2; ++i) inv_freq[size_t(i)] = std::pow(10000.0f, -2.0f * i / c.rot_dim);
    const RopeConfig rope{inv_freq.data(), c.rot_dim, c.neox, c.attention_factor};
    std::vector<int32_t> positions(n);
    std::vector<int64_t> slots(n);
    std::vector<int64_t> all_slots(size_t(num_blocks * block_size));
    std::iota(all_slots.begin(), all_slots.end(), 0);
    std::shuffle(all_slots.begin(), all_slots.end(), rng);
    for (int64_t t = 0; t < n; ++t) {
      positions[size_t(t)] = std::uniform_int_distribution<int32_t>(0, 5000)(rng);
      slots[size_t(t)] = all_slots[size_t(t)];
    }
    AttentionMetadata meta;
    meta.num_tokens = static_cast<int>(n);
    meta.slot_mapping = slots.data();
    const auto qkv = random_values(rng, size_t(n * (c.heads + 2 * c.kv_heads) * d), 2.0f);
    const auto qn = random_values(rng, size_t(d)), kn = random_values(rng, size_t(d));
    const Shape qkv_shape = {n, (c.heads + 2 * c.kv_heads) * d}, q_shape = {n, c.heads, d};
    const Shape cache_shape = {num_blocks, block_size, c.kv_heads, d};

    // On b with F32 caches: q, then the caches.
    const auto run = [&](Backend& b, bool fused) {
      const Tensor q_norm = b.upload(Tensor::view(DType::F32, {d}, qn.data()));
      const Tensor k_norm = b.upload(Tensor::view(DType::F32, {d}, kn.data()));
      const HeadNorms norms = c.norms ? HeadNorms{&q_norm, &k_norm, 1e-6f} : HeadNorms{};
      Tensor q = b.alloc(DType::F32, q_shape);
      Tensor kc = b.alloc(DType::F32, cache_shape), vc = b.alloc(DType::F32, cache_shape);
      const Tensor x = on(b, qkv, qkv_shape);
      if (fused) {
        b.split_rope_write_kv(x, norms, positions.data(), rope, q, kc, vc, meta);
      } else {
        b.Backend::split_rope_write_kv(x, norms, positions.data(), rope, q, kc, vc, meta);
      }
      return std::vector<std::vector<float>>{back(b, q), back(b, kc), back(b, vc)};
    };
    const auto fused = run(*gpu, true), composed = run(*gpu, false), on_cpu = run(*cpu, false);
    for (size_t i = 0; i < 3; ++i) {
      const char* part = i == 0 ? "q" : i == 1 ? "k cache" : "v cache";
      if (c.norms) {  // a warp's sum of squares, not rms_norm's block sum: rounding apart
        EXPECT_LT(relative_error(fused[i], composed[i]), 1e-6) << part << ", " << what;
      } else {
        EXPECT_EQ(fused[i], composed[i]) << part << ", " << what;
      }
      EXPECT_LT(relative_error(fused[i], on_cpu[i]), 1e-5) << part << " vs CPU, " << what;
    }

    // BF16 caches: attention over what each wrote gives the same result.
    std::vector<float> outputs[2];
    for (const bool is_fused : {true, false}) {
      const Tensor q_norm = gpu->upload(Tensor::view(DType::F32, {d}, qn.data()));
      const Tensor k_norm = gpu->upload(Tensor::view(DType::F32, {d}, kn.data()));
      const HeadNorms norms = c.norms ? HeadNorms{&q_norm, &k_norm, 1e-6f} : HeadNorms{};
      Tensor q = gpu->alloc(DType::F32, q_shape);
      Tensor kc = gpu->alloc(DType::BF16, cache_shape), vc = gpu->alloc(DType::BF16, cache_shape);
      const Tensor x = on(*gpu, qkv, qkv_shape);
      if (is_fused) {
        gpu->split_rope_write_kv(x, norms, positions.data(), rope, q, kc, vc, meta);
      } else {
        gpu->Backend::split_rope_write_kv(x, norms, positions.data(), rope, q, kc, vc, meta);
      }
      // One sequence per token, its context that token's slot alone (block table: its block).
      const auto count = static_cast<size_t>(n);
      std::vector<int32_t> qsl(count + 1), lens(count), tables(count);
      for (int64_t t = 0; t < n; ++t) {
        qsl[size_t(t)] = static_cast<int32_t>(t);
        tables[size_t(t)] = static_cast<int32_t>(slots[size_t(t)] / block_size);
        lens[size_t(t)] = static_cast<int32_t>(slots[size_t(t)] % block_size) + 1;
      }
      qsl[size_t(n)] = static_cast<int32_t>(n);
      // Each token's context is its block up to its own slot: slots before it in the block
      // hold whatever this case wrote there (zeros or other tokens), the same for both runs.
      const AttentionMetadata attend{static_cast<int>(n), static_cast<int>(n), qsl.data(), lens.data(), tables.data(),
                                     1, slots.data()};
      Tensor out = gpu->alloc(DType::F32, q_shape);
      gpu->paged_attention(q, kc, vc, attend, 0.125f, 0, 0.0f, out);
      outputs[is_fused ? 0 : 1] = back(*gpu, out);
    }
    if (c.norms) {
      EXPECT_LT(relative_error(outputs[0], outputs[1]), 1e-5) << "BF16 caches, " << what;
    } else {
      EXPECT_EQ(outputs[0], outputs[1]) << "BF16 caches, " << what;
    }
  }
}

}  // namespace
}  // namespace pagoda
