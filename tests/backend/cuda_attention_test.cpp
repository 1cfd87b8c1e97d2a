// Paged attention on the GPU against the CPU backend: the CUDA-core kernel (decodes, and
// every row in batch-invariant mode; over BF16 caches its chunks' arithmetic runs on the
// tensor cores, attention_mma.cuh) and the tensor-core kernel for prefill chunks, over F32
// and BF16 caches, ragged batches and scattered blocks. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "cuda_test_util.h"

namespace pagoda {
namespace {

using namespace test;

// A batch's attention metadata over scattered blocks: sequence s has seq_lens[s] tokens of
// context, the last num_new[s] of them new in this step; its blocks come from a shuffled
// pool of blocks 1 .. num_blocks - 1.
struct PagedBatch {
  std::vector<int32_t> seq_lens, num_new, qsl = {0}, tables;
  std::vector<int64_t> slots;
  int max_blocks;
  int64_t block_size;

  PagedBatch(std::vector<int32_t> lens, std::vector<int32_t> news, int64_t block, int64_t num_blocks,
             int max_blocks_per_seq, std::mt19937& rng)
      : seq_lens(std::move(lens)), num_new(std::move(news)), max_blocks(max_blocks_per_seq), block_size(block) {
    for (const int32_t q : num_new) qsl.push_back(qsl.back() + q);
    std::vector<int32_t> pool(static_cast<size_t>(num_blocks - 1));
    std::iota(pool.begin(), pool.end(), 1);
    std::shuffle(pool.begin(), pool.end(), rng);
    tables.assign(seq_lens.size() * static_cast<size_t>(max_blocks), 0);
    size_t next = 0;
    for (size_t s = 0; s < seq_lens.size(); ++s) {
      for (int j = 0; j < (seq_lens[s] + block_size - 1) / block_size; ++j) {
        tables[s * max_blocks + j] = pool.at(next++);
      }
    }
    for (size_t s = 0; s < seq_lens.size(); ++s) {
      for (int32_t p = seq_lens[s] - num_new[s]; p < seq_lens[s]; ++p) slots.push_back(slot(static_cast<int>(s), p));
    }
  }
  [[nodiscard]] int64_t slot(int s, int32_t p) const {
    return int64_t{tables[static_cast<size_t>(s) * max_blocks + p / block_size]} * block_size + p % block_size;
  }
  [[nodiscard]] int num_tokens() const { return qsl.back(); }
  [[nodiscard]] int num_seqs() const { return static_cast<int>(seq_lens.size()); }
  [[nodiscard]] AttentionMetadata meta() const {
    return {num_tokens(), num_seqs(), qsl.data(), seq_lens.data(), tables.data(), max_blocks, slots.data()};
  }
};

// A layout of heads and a kind of attention.
struct AttentionCase {
  int64_t heads, kv_heads, head_dim;
  int window;
  float softcap;
};

// The relative error of rows [begin, end) (row floats each) of got against expected.
double rows_error(const std::vector<float>& got, const std::vector<float>& expected, int64_t begin, int64_t end,
                  int64_t row) {
  const std::vector<float> a(got.begin() + begin * row, got.begin() + end * row);
  const std::vector<float> b(expected.begin() + begin * row, expected.begin() + end * row);
  return relative_error(a, b);
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
  const AttentionCase cases[] = {{8, 2, 64, 0, 0.0f}, {32, 8, 128, 0, 0.0f}, {4, 1, 256, 16, 0.0f},
                                 {14, 2, 64, 0, 30.0f}, {9, 3, 64, 0, 0.0f}};
  for (const AttentionCase& c : cases) {
    const int64_t block_size = 16, num_blocks = 40;
    const PagedBatch batch({45, 30, 20}, {1, 7, 20}, block_size, num_blocks, 4, rng);
    const int num_tokens = batch.num_tokens();
    const AttentionMetadata meta = batch.meta();

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

// The GPU's own KV dtype (BF16) over long contexts: decodes over 1,000 and 300 keys, prefill
// chunks of 70 and 64 tokens, GQA groups of 4, 2, 7 and 12 (blocks of 6 heads), a sliding
// window, softcapping, head_dim 64 to 256. Cache values are BF16-representable, so the CPU
// (F32 caches) sees the same numbers. In batch-invariant mode each sequence attended alone
// must give the same bits as inside the batch. The split decodes are combined by a kernel of
// their own (the default) or by their last split (PAGODA_FOLD_COMBINE=1): the same bits.
TEST(CudaBackend, PagedAttentionOnBf16CachesMatchesCpuOverLongContexts) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  ASSERT_EQ(gpu->kv_cache_dtype(), DType::BF16);
  std::unique_ptr<Backend> one_pass = batch_invariant_gpu();
  std::unique_ptr<Backend> folded = gpu_with("PAGODA_FOLD_COMBINE", "1");
  std::unique_ptr<Backend> cuda_cores = gpu_with("PAGODA_ATTENTION_MMA", "0");
  std::mt19937 rng(11);
  const AttentionCase cases[] = {{32, 8, 128, 0, 0.0f}, {16, 8, 64, 0, 0.0f}, {14, 2, 64, 0, 30.0f},
                                 {4, 1, 256, 100, 0.0f}, {12, 1, 96, 0, 0.0f}};
  for (const AttentionCase& c : cases) {
    const int64_t block_size = 16, num_blocks = 110;
    const int max_blocks = 63;
    const PagedBatch batch({1000, 300, 200, 64}, {1, 1, 70, 64}, block_size, num_blocks, max_blocks, rng);
    const std::vector<int32_t>& seq_lens = batch.seq_lens;
    const std::vector<int32_t>& num_new = batch.num_new;
    const std::vector<int32_t>& qsl = batch.qsl;
    const std::vector<int32_t>& tables = batch.tables;
    const std::vector<int64_t>& slots = batch.slots;
    const int num_seqs = batch.num_seqs(), num_tokens = batch.num_tokens();
    const AttentionMetadata meta = batch.meta();

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

    std::vector<float> split_result;
    for (Backend* b : {gpu.get(), folded.get(), one_pass.get(), cuda_cores.get()}) {
      Tensor kg = b->alloc(DType::BF16, cache_shape), vg = b->alloc(DType::BF16, cache_shape);
      fill_caches(*b, cache_k, cache_v, kg, vg);
      b->write_kv(on(*b, k, kv_shape), on(*b, v, kv_shape), kg, vg, meta);
      Tensor og = b->alloc(DType::F32, q_shape);
      b->paged_attention(on(*b, q, q_shape), kg, vg, meta, scale, c.window, c.softcap, og);
      const std::vector<float> got = back(*b, og);
      if (b == gpu.get()) split_result = got;
      if (b == folded.get()) {
        EXPECT_EQ(got, split_result) << "combined by the last split, heads " << c.heads << "/" << c.kv_heads;
        continue;
      }
      const int64_t row = c.heads * c.head_dim;
      // Every row meets the tensor cores with q and P in BF16: the decodes (rows 0 and 1) and,
      // in one-pass mode, the prefill chunks in the CUDA-core kernel's chunks (attention_mma.cuh,
      // for these head layouts), otherwise the prefill chunks in the tensor-core kernel. With
      // PAGODA_ATTENTION_MMA=0 the decodes stay on the CUDA cores, in F32.
      const char* mode = b == gpu.get() ? "split" : b == one_pass.get() ? "one pass" : "split, CUDA cores";
      EXPECT_LT(rows_error(got, expected, 0, qsl[2], row), b == cuda_cores.get() ? 1e-5 : 3e-3)
          << mode << ", heads " << c.heads << "/" << c.kv_heads << " head_dim " << c.head_dim;
      EXPECT_LT(rows_error(got, expected, qsl[2], num_tokens, row), 3e-3)
          << mode << ", heads " << c.heads << "/" << c.kv_heads << " head_dim " << c.head_dim;
      if (b != one_pass.get()) continue;
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

// The tensor-core kernel for prefill chunks: a chunk after 400 cached keys, a whole prompt, a
// two-token chunk and a decode in one batch, for GQA groups of 1 to 12 (tiles of 64 / group
// tokens, some rows of a tile unused), head_dim 64, 96 and 128, a sliding window and
// softcapping. q, P and the cache are BF16 on the GPU, so the bound is BF16's. Then the long
// chunk again in two pieces: every row gets the same bits as in one piece, since a row's
// result depends on neither the rows it shares a tile with nor where its tile starts.
TEST(CudaAttention, PrefillChunksOnTensorCoresMatchCpuAndDoNotDependOnChunking) {
  PAGODA_NEED_GPU();
  auto& [cpu, gpu] = backends();
  ASSERT_EQ(gpu->kv_cache_dtype(), DType::BF16);
  std::mt19937 rng(12);
  const AttentionCase cases[] = {{32, 8, 128, 0, 0.0f}, {16, 8, 64, 0, 0.0f}, {14, 2, 64, 0, 30.0f},
                                 {12, 1, 96, 0, 0.0f}, {8, 8, 128, 100, 0.0f}, {9, 3, 64, 0, 0.0f}};
  for (const AttentionCase& c : cases) {
    const int64_t block_size = 16, num_blocks = 90;
    const int max_blocks = 48;
    const PagedBatch batch({700, 97, 50, 333}, {300, 97, 2, 1}, block_size, num_blocks, max_blocks, rng);
    const int num_tokens = batch.num_tokens();
    const Shape cache_shape = {num_blocks, block_size, c.kv_heads, c.head_dim};
    const auto cache_k = bf16_values(rng, size_t(num_blocks * block_size * c.kv_heads * c.head_dim));
    const auto cache_v = bf16_values(rng, cache_k.size());
    const auto q = bf16_values(rng, size_t(num_tokens * c.heads * c.head_dim));
    const Shape q_shape = {num_tokens, c.heads, c.head_dim};
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    const int64_t row = c.heads * c.head_dim;
    const AttentionMetadata meta = batch.meta();

    Tensor kc = on(*cpu, cache_k, cache_shape), vc = on(*cpu, cache_v, cache_shape);
    Tensor oc = cpu->alloc(DType::F32, q_shape);
    cpu->paged_attention(on(*cpu, q, q_shape), kc, vc, meta, scale, c.window, c.softcap, oc);
    const std::vector<float> expected = back(*cpu, oc);

    Tensor kg = gpu->alloc(DType::BF16, cache_shape), vg = gpu->alloc(DType::BF16, cache_shape);
    fill_caches(*gpu, cache_k, cache_v, kg, vg);
    Tensor og = gpu->alloc(DType::F32, q_shape);
    std::vector<float> poison(q.size(), std::nanf(""));
    gpu->copy_from_host(poison.data(), og);
    gpu->paged_attention(on(*gpu, q, q_shape), kg, vg, meta, scale, c.window, c.softcap, og);
    const std::vector<float> got = back(*gpu, og);
    const std::string what = "heads " + std::to_string(c.heads) + "/" + std::to_string(c.kv_heads) + " head_dim " +
                             std::to_string(c.head_dim);
    for (int s = 0; s < batch.num_seqs(); ++s) {
      // The decode's chunks go to the tensor cores too where the group's warps can hold the
      // output tiles (all but 8/8 at head_dim 128, which stays in F32): BF16's bound for every row.
      EXPECT_LT(rows_error(got, expected, batch.qsl[s], batch.qsl[s + 1], row), 3e-3)
          << "sequence " << s << ", " << what;
    }

    // Sequence 0's 300 new tokens as chunks of 137 and 163.
    std::vector<float> pieces;
    for (const auto& [first, count] : {std::pair{400, 137}, std::pair{537, 163}}) {
      const std::vector<int32_t> qsl = {0, count}, lens = {first + count};
      std::vector<int64_t> slots;
      for (int32_t p = first; p < first + count; ++p) slots.push_back(batch.slot(0, p));
      const AttentionMetadata chunk{count, 1, qsl.data(), lens.data(), batch.tables.data(), max_blocks, slots.data()};
      const int64_t offset = int64_t{first - 400} * row;
      const std::vector<float> q_chunk(q.begin() + offset, q.begin() + offset + count * row);
      const Shape shape = {count, c.heads, c.head_dim};
      Tensor o_chunk = gpu->alloc(DType::F32, shape);
      gpu->paged_attention(on(*gpu, q_chunk, shape), kg, vg, chunk, scale, c.window, c.softcap, o_chunk);
      const std::vector<float> part = back(*gpu, o_chunk);
      pieces.insert(pieces.end(), part.begin(), part.end());
    }
    const std::vector<float> whole(got.begin(), got.begin() + 300 * row);
    EXPECT_EQ(pieces, whole) << "chunked, " << what;
  }
}

// A tensor's bytes as they are on the backend (a BF16 cache is compared bit for bit),
// downloaded as 4-byte words (download takes F32 tensors).
std::vector<uint8_t> device_bytes(Backend& b, const Tensor& t) {
  const std::vector<float> w = back(b, Tensor::view(DType::F32, {static_cast<int64_t>(t.nbytes() / 4)}, t.raw()));
  std::vector<uint8_t> out(w.size() * 4);
  std::memcpy(out.data(), w.data(), out.size());
  return out;
}

// attend_from_qkv, which the CUDA backend runs as one kernel for a batch of decodes (the
// queries normed and rotated by every block, the new key and value made by the block whose
// keys end with them), against the two ops it stands for on the same GPU
// (Backend::attend_from_qkv: split_rope_write_kv, then paged_attention): the same bits in
// the output and in both caches. Decodes over 1 to 1,100 keys in scattered blocks (the host
// checks refuse a padding token's slot -1, so padding is covered where it occurs, in the
// engine's DecodeGraphs tests on the GPU); Llama's layout, Qwen3's
// head norms, GPT-J's interleaved and a partial rotation with an attention factor, a sliding
// window, softcapping, GQA groups of 1 to 8, head_dim 64 to 256; BF16 and F32 caches; split
// and combined by a kernel or by the last split, and in one pass (batch-invariant mode); the
// BF16 caches' chunks on the tensor cores (attention_mma.cuh) and, with
// PAGODA_ATTENTION_MMA=0, on the CUDA cores.
// And against the CPU's composition on F32 caches.
TEST(CudaAttention, DecodeAttentionFromQkvIsTheComposition) {
  PAGODA_NEED_GPU();
  Backend& cpu = *backends().cpu;
  std::unique_ptr<Backend> split = make_backend("cuda");
  std::unique_ptr<Backend> folded = gpu_with("PAGODA_FOLD_COMBINE", "1");
  std::unique_ptr<Backend> one_pass = batch_invariant_gpu();
  std::unique_ptr<Backend> cuda_cores = gpu_with("PAGODA_ATTENTION_MMA", "0");
  std::mt19937 rng(31);
  struct Case {
    int64_t heads, kv_heads, head_dim;
    int rot_dim;
    bool neox, norms;
    float attention_factor;
    int window;
    float softcap;
  };
  const Case cases[] = {{32, 8, 128, 128, true, false, 1.0f, 0, 0.0f},  {16, 8, 128, 128, true, true, 1.0f, 0, 0.0f},
                        {14, 2, 64, 32, false, true, 1.0f, 0, 30.0f},   {4, 1, 256, 128, true, true, 1.3f, 40, 0.0f},
                        {6, 6, 64, 64, false, false, 1.0f, 0, 0.0f}};
  for (const Case& c : cases) {
    for (const DType cache_dtype : {DType::BF16, DType::F32}) {
      const std::string what = "heads " + std::to_string(c.heads) + "/" + std::to_string(c.kv_heads) +
                               " head_dim " + std::to_string(c.head_dim) + (c.norms ? " norms" : "") +
                               (c.neox ? "" : " gpt-j") + (cache_dtype == DType::BF16 ? " bf16" : " f32");
      const int64_t block_size = 16, num_blocks = 100, d = c.head_dim;
      PagedBatch batch({1, 33, 300, 1100, 64, 1}, {1, 1, 1, 1, 1, 1}, block_size, num_blocks, 70, rng);
      const AttentionMetadata meta = batch.meta();
      const int n = batch.num_tokens();
      std::vector<int32_t> positions;
      for (const int32_t len : batch.seq_lens) positions.push_back(len - 1);
      std::vector<float> inv_freq(size_t(c.rot_dim / 2));
      for (int i = 0; i < c.rot_dim / 2; ++i) inv_freq[size_t(i)] = std::pow(10000.0f, -2.0f * i / c.rot_dim);
      const RopeConfig rope{inv_freq.data(), c.rot_dim, c.neox, c.attention_factor};
      const Shape cache_shape = {num_blocks, block_size, c.kv_heads, d};
      const Shape qkv_shape = {n, (c.heads + 2 * c.kv_heads) * d};
      const auto cache_k = bf16_values(rng, size_t(num_blocks * block_size * c.kv_heads * d));
      const auto cache_v = bf16_values(rng, cache_k.size());
      const auto qkv = random_values(rng, size_t(n * (c.heads + 2 * c.kv_heads) * d), 2.0f);
      const auto qn = random_values(rng, size_t(d)), kn = random_values(rng, size_t(d));
      const float scale = 1.0f / std::sqrt(static_cast<float>(d));

      struct Result {
        std::vector<float> out;
        std::vector<uint8_t> k, v;
      };
      const auto run = [&](Backend& b, bool fused, DType dtype) {
        const Tensor q_norm = b.upload(Tensor::view(DType::F32, {d}, qn.data()));
        const Tensor k_norm = b.upload(Tensor::view(DType::F32, {d}, kn.data()));
        const HeadNorms norms = c.norms ? HeadNorms{&q_norm, &k_norm, 1e-6f} : HeadNorms{};
        Tensor kc = b.alloc(dtype, cache_shape), vc = b.alloc(dtype, cache_shape);
        fill_caches(b, cache_k, cache_v, kc, vc);
        const Shape shape = {n, c.heads, d};
        Tensor q = b.alloc(DType::F32, shape), out = b.alloc(DType::F32, shape);
        const Tensor x = on(b, qkv, qkv_shape);
        if (fused) {
          b.attend_from_qkv(x, norms, positions.data(), rope, q, kc, vc, meta, scale, c.window, c.softcap, out);
        } else {
          b.Backend::attend_from_qkv(x, norms, positions.data(), rope, q, kc, vc, meta, scale, c.window, c.softcap,
                                     out);
        }
        return Result{back(b, out), device_bytes(b, kc), device_bytes(b, vc)};
      };
      const Result on_cpu = run(cpu, false, DType::F32);
      for (Backend* b : {split.get(), folded.get(), one_pass.get(), cuda_cores.get()}) {
        const char* mode = b == split.get()    ? "split"
                           : b == folded.get() ? "split, folded combine"
                           : b == one_pass.get() ? "one pass"
                                                 : "split, chunks on CUDA cores";
        const Result fused = run(*b, true, cache_dtype), composed = run(*b, false, cache_dtype);
        EXPECT_EQ(fused.out, composed.out) << mode << ", " << what;
        EXPECT_TRUE(fused.k == composed.k) << "k cache, " << mode << ", " << what;
        EXPECT_TRUE(fused.v == composed.v) << "v cache, " << mode << ", " << what;
        // The CPU's caches are F32; the GPU's BF16 caches round the new key and value.
        const double tolerance = cache_dtype == DType::F32 ? 1e-5 : 1e-2;
        EXPECT_LT(relative_error(fused.out, on_cpu.out), tolerance) << mode << " vs CPU, " << what;
      }
    }
  }
}

}  // namespace
}  // namespace pagoda
