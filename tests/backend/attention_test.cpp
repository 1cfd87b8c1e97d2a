// write_kv + paged_attention on ragged batches (prefill chunks and decodes mixed, different
// prior context lengths, shuffled non-contiguous block tables) against naive causal
// attention in double over contiguous K/V.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "backend/backend.h"
#include "backend_test_util.h"

namespace pagoda {
namespace {

struct SeqSpec {
  int prior;  // tokens already in the cache before this step
  int fresh;  // tokens of this step
};

struct Params {
  int heads, kv_heads, head_dim;
  int sliding_window;
  float softcap;
};

// Step metadata for the tokens [first[s], first[s] + count[s]) of each sequence.
struct Step {
  std::vector<int32_t> query_start_loc, seq_lens;
  std::vector<int64_t> slot_mapping;
  std::vector<std::pair<int, int>> tokens;  // (sequence, position) of each batch token
  AttentionMetadata meta;
};

Step make_step(const std::vector<SeqSpec>& seqs, bool prior_part, const std::vector<int32_t>& block_tables,
               int max_blocks, int block_size) {
  Step step;
  step.query_start_loc.push_back(0);
  for (size_t s = 0; s < seqs.size(); ++s) {
    const int begin = prior_part ? 0 : seqs[s].prior;
    const int end = prior_part ? seqs[s].prior : seqs[s].prior + seqs[s].fresh;
    for (int p = begin; p < end; ++p) {
      const int32_t block = block_tables[s * max_blocks + p / block_size];
      step.slot_mapping.push_back(static_cast<int64_t>(block) * block_size + p % block_size);
      step.tokens.emplace_back(static_cast<int>(s), p);
    }
    step.query_start_loc.push_back(static_cast<int32_t>(step.tokens.size()));
    step.seq_lens.push_back(end);
  }
  step.meta.num_tokens = static_cast<int>(step.tokens.size());
  step.meta.num_seqs = static_cast<int>(seqs.size());
  step.meta.query_start_loc = step.query_start_loc.data();
  step.meta.seq_lens = step.seq_lens.data();
  step.meta.block_tables = block_tables.data();
  step.meta.max_blocks_per_seq = max_blocks;
  step.meta.slot_mapping = step.slot_mapping.data();
  return step;
}

void run_case(Backend& backend, const std::vector<SeqSpec>& seqs, const Params& p, std::mt19937& rng) {
  constexpr int kBlockSize = 4, kNumBlocks = 64;
  const int row = p.kv_heads * p.head_dim;
  int max_len = 0;
  for (const SeqSpec& s : seqs) max_len = std::max(max_len, s.prior + s.fresh);
  const int max_blocks = (max_len + kBlockSize - 1) / kBlockSize + 1;

  // Every sequence gets distinct, shuffled block ids (unused table entries stay -1).
  std::vector<int32_t> ids(kNumBlocks);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  std::vector<int32_t> tables(seqs.size() * max_blocks, -1);
  size_t next = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const int need = (seqs[s].prior + seqs[s].fresh + kBlockSize - 1) / kBlockSize;
    for (int j = 0; j < need; ++j) tables[s * max_blocks + j] = ids.at(next++);
  }

  // Contiguous reference K/V per sequence: [position, kv_head, head_dim].
  std::vector<std::vector<float>> keys, values;
  for (const SeqSpec& s : seqs) {
    keys.push_back(test::random_floats(rng, static_cast<size_t>((s.prior + s.fresh) * row)));
    values.push_back(test::random_floats(rng, static_cast<size_t>((s.prior + s.fresh) * row)));
  }

  Tensor k_cache = backend.alloc(DType::F32, {kNumBlocks, kBlockSize, p.kv_heads, p.head_dim});
  Tensor v_cache = backend.alloc(DType::F32, {kNumBlocks, kBlockSize, p.kv_heads, p.head_dim});
  for (bool prior_part : {true, false}) {  // an earlier step fills the prior context
    const Step step = make_step(seqs, prior_part, tables, max_blocks, kBlockSize);
    Tensor k = backend.alloc(DType::F32, {std::max(1, step.meta.num_tokens), p.kv_heads, p.head_dim});
    Tensor v = backend.alloc(DType::F32, {std::max(1, step.meta.num_tokens), p.kv_heads, p.head_dim});
    for (size_t t = 0; t < step.tokens.size(); ++t) {
      const auto [s, pos] = step.tokens[t];
      std::memcpy(k.data<float>() + t * row, &keys[s][pos * row], row * sizeof(float));
      std::memcpy(v.data<float>() + t * row, &values[s][pos * row], row * sizeof(float));
    }
    if (step.meta.num_tokens == 0) continue;
    backend.write_kv(k, v, k_cache, v_cache, step.meta);
  }

  const Step step = make_step(seqs, false, tables, max_blocks, kBlockSize);
  const int n = step.meta.num_tokens;
  // The cache holds each context token at its slot.
  for (size_t s = 0; s < seqs.size(); ++s) {
    for (int pos = 0; pos < seqs[s].prior + seqs[s].fresh; ++pos) {
      const int64_t slot = static_cast<int64_t>(tables[s * max_blocks + pos / kBlockSize]) * kBlockSize + pos % kBlockSize;
      ASSERT_EQ(0, std::memcmp(k_cache.data<float>() + slot * row, &keys[s][pos * row], row * sizeof(float)));
      ASSERT_EQ(0, std::memcmp(v_cache.data<float>() + slot * row, &values[s][pos * row], row * sizeof(float)));
    }
  }

  const std::vector<float> q = test::random_floats(rng, static_cast<size_t>(n) * p.heads * p.head_dim, 2.0f);
  Tensor qt = backend.alloc(DType::F32, {n, p.heads, p.head_dim});
  std::memcpy(qt.raw(), q.data(), q.size() * sizeof(float));
  Tensor out = backend.alloc(DType::F32, {n, p.heads, p.head_dim});
  const float scale = 1.0f / std::sqrt(static_cast<float>(p.head_dim));
  backend.paged_attention(qt, k_cache, v_cache, step.meta, scale, p.sliding_window, p.softcap, out);
  std::vector<float> got(q.size());
  backend.download(out, got.data());

  const int group = p.heads / p.kv_heads;
  for (int t = 0; t < n; ++t) {
    const auto [s, pos] = step.tokens[t];
    for (int h = 0; h < p.heads; ++h) {
      const int kvh = h / group;
      const int first = p.sliding_window > 0 ? std::max(0, pos - p.sliding_window + 1) : 0;
      std::vector<double> scores;
      for (int j = first; j <= pos; ++j) {
        double dot = 0;
        for (int d = 0; d < p.head_dim; ++d) {
          dot += static_cast<double>(q[(t * p.heads + h) * p.head_dim + d]) * keys[s][(j * p.kv_heads + kvh) * p.head_dim + d];
        }
        dot *= scale;
        if (p.softcap > 0) dot = p.softcap * std::tanh(dot / p.softcap);
        scores.push_back(dot);
      }
      const double mx = *std::max_element(scores.begin(), scores.end());
      double denom = 0;
      for (double& sc : scores) denom += (sc = std::exp(sc - mx));
      for (int d = 0; d < p.head_dim; ++d) {
        double ref = 0;
        for (int j = first; j <= pos; ++j) ref += scores[j - first] / denom * values[s][(j * p.kv_heads + kvh) * p.head_dim + d];
        // Outputs are convex combinations of O(1) values; f32 scores and sums stay within 1e-5.
        ASSERT_NEAR(got[(t * p.heads + h) * p.head_dim + d], ref, 1e-5)
            << "seq " << s << " pos " << pos << " head " << h << " dim " << d << " window " << p.sliding_window
            << " softcap " << p.softcap << " heads " << p.heads << "/" << p.kv_heads;
      }
    }
  }
}

TEST(CpuAttention, RaggedBatchesMatchNaiveAttention) {
  std::mt19937 rng(21);
  auto backend = make_cpu_backend(3);
  // Fresh prefill, decode after a long context, a middle chunk, a one-token prompt,
  // a chunk crossing several blocks.
  const std::vector<SeqSpec> seqs = {{0, 7}, {10, 1}, {5, 3}, {0, 1}, {13, 9}, {22, 1}};
  for (const Params& p : {Params{8, 2, 16, 0, 0.0f}, Params{4, 4, 32, 0, 0.0f}, Params{8, 2, 16, 5, 0.0f},
                          Params{4, 4, 8, 3, 0.0f}, Params{8, 2, 16, 0, 2.0f}, Params{8, 2, 64, 6, 1.5f}}) {
    run_case(*backend, seqs, p, rng);
  }
}

TEST(CpuAttention, SingleDecodeBatch) {
  std::mt19937 rng(22);
  auto backend = make_cpu_backend(1);
  run_case(*backend, {{30, 1}, {0, 1}, {3, 1}}, Params{8, 2, 16, 0, 0.0f}, rng);
}

}  // namespace
}  // namespace pagoda
