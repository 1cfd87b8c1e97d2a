#include "runner/batch_generator.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "runner/paged_batch.h"

namespace pagoda {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

BatchGenerator::BatchGenerator(Model& model, Backend& backend, int block_size)
    : model_(model), backend_(backend), block_size_(block_size) {}

int32_t BatchGenerator::sample(const float* logits, float temperature, std::mt19937_64& rng) const {
  const int vocab = model_.spec().vocab_size;
  const int32_t best = static_cast<int32_t>(std::max_element(logits, logits + vocab) - logits);
  if (temperature <= 0) return best;
  std::vector<double> p(static_cast<size_t>(vocab));
  double sum = 0;
  for (int i = 0; i < vocab; ++i) {
    p[static_cast<size_t>(i)] = std::exp(static_cast<double>(logits[i] - logits[best]) / temperature);
    sum += p[static_cast<size_t>(i)];
  }
  double r = std::uniform_real_distribution<double>(0.0, sum)(rng);
  for (int i = 0; i < vocab; ++i) {
    r -= p[static_cast<size_t>(i)];
    if (r <= 0) return i;
  }
  return best;
}

std::vector<std::vector<int32_t>> BatchGenerator::generate(
    const std::vector<std::vector<int32_t>>& prompts, const GenerateOptions& options,
    const std::function<bool(int32_t)>& is_eos, const std::function<void(int, int32_t)>& on_token) {
  stats_ = {};
  const int num_seqs = static_cast<int>(prompts.size());
  const int vocab = model_.spec().vocab_size;
  std::vector<std::vector<int32_t>> tokens(prompts);  // prompt + output, per sequence
  std::vector<std::vector<int32_t>> outputs(static_cast<size_t>(num_seqs));
  std::vector<int> computed(static_cast<size_t>(num_seqs), 0);
  std::vector<bool> done(static_cast<size_t>(num_seqs), false);
  int max_len = 0;
  for (const auto& p : prompts) {
    if (p.empty()) fail("empty prompt");
    max_len = std::max(max_len, static_cast<int>(p.size()) + options.max_tokens);
    stats_.prompt_tokens += static_cast<int>(p.size());
  }
  if (model_.spec().max_position_embeddings > 0 && max_len > model_.spec().max_position_embeddings) {
    fail("prompt plus max_tokens (", max_len, ") exceeds the model's context of ",
         model_.spec().max_position_embeddings);
  }

  // Interleaved block ids: sequence s gets blocks 1 + s, 1 + s + num_seqs, ... (0 is null).
  const int blocks_per_seq = (max_len + block_size_ - 1) / block_size_;
  KvCache cache(backend_, model_.spec(), 1 + blocks_per_seq * num_seqs, block_size_);
  std::vector<std::vector<int32_t>> block_ids(static_cast<size_t>(num_seqs));
  for (int s = 0; s < num_seqs; ++s) {
    for (int b = 0; b < blocks_per_seq; ++b) block_ids[static_cast<size_t>(s)].push_back(1 + s + b * num_seqs);
  }
  std::vector<std::mt19937_64> rngs;
  for (int s = 0; s < num_seqs; ++s) rngs.emplace_back(options.seed + static_cast<uint64_t>(s));
  std::vector<float> logits_host;

  int active = num_seqs;
  while (active > 0) {
    // Every sequence with unprocessed tokens contributes them (chunked for long prompts).
    std::vector<SequenceChunk> chunks;
    std::vector<int> members;
    std::vector<int32_t> ids;
    bool prefill = false;
    for (int s = 0; s < num_seqs; ++s) {
      if (done[static_cast<size_t>(s)]) continue;
      const auto& t = tokens[static_cast<size_t>(s)];
      const int pending = static_cast<int>(t.size()) - computed[static_cast<size_t>(s)];
      const int take = std::min(pending, std::max(1, options.prefill_chunk));
      prefill |= take > 1 || outputs[static_cast<size_t>(s)].empty();
      chunks.push_back({block_ids[static_cast<size_t>(s)], computed[static_cast<size_t>(s)], take});
      members.push_back(s);
      ids.insert(ids.end(), t.begin() + computed[static_cast<size_t>(s)], t.begin() + computed[static_cast<size_t>(s)] + take);
    }
    PagedBatch batch(chunks, block_size_);
    const double start = now_seconds();
    Tensor logits = model_.forward({ids, batch.positions(), batch.metadata(), batch.last_token_rows()}, cache);
    logits_host.resize(static_cast<size_t>(logits.numel()));
    backend_.download(logits, logits_host.data());
    (prefill ? stats_.prefill_seconds : stats_.decode_seconds) += now_seconds() - start;

    for (size_t i = 0; i < members.size(); ++i) {
      const int s = members[i];
      auto& t = tokens[static_cast<size_t>(s)];
      computed[static_cast<size_t>(s)] += chunks[i].num_new;
      if (computed[static_cast<size_t>(s)] < static_cast<int>(t.size())) continue;  // prompt not done
      const int32_t next = sample(logits_host.data() + i * static_cast<size_t>(vocab), options.temperature, rngs[static_cast<size_t>(s)]);
      t.push_back(next);
      outputs[static_cast<size_t>(s)].push_back(next);
      ++stats_.generated_tokens;
      if (on_token) on_token(s, next);
      const bool eos = options.stop_at_eos && is_eos && is_eos(next);
      if (eos || static_cast<int>(outputs[static_cast<size_t>(s)].size()) >= options.max_tokens) {
        done[static_cast<size_t>(s)] = true;
        --active;
      }
    }
  }
  return outputs;
}

}  // namespace pagoda
