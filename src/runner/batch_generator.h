// A simple generation loop over the paged KV cache, for the CLI and benchmarks until the
// engine core (scheduler + runner) takes over: all prompts are prefilled (in chunks), then
// decoded together one token per step. Blocks are handed out interleaved across sequences,
// so block tables are never contiguous and paging is exercised from the start.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "model/model.h"

namespace pagoda {

struct GenerateOptions {
  int max_tokens = 64;
  float temperature = 0.0f;  // 0: greedy
  uint64_t seed = 0;
  bool stop_at_eos = true;
  int prefill_chunk = 512;  // tokens per prefill step (chunked prefill)
};

struct GenerateStats {
  int prompt_tokens = 0;
  int generated_tokens = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;
};

class BatchGenerator {
 public:
  BatchGenerator(Model& model, Backend& backend, int block_size = 16);

  // on_token(sequence, token) is called as tokens are produced (for streaming).
  std::vector<std::vector<int32_t>> generate(
      const std::vector<std::vector<int32_t>>& prompts, const GenerateOptions& options,
      const std::function<bool(int32_t)>& is_eos = nullptr,
      const std::function<void(int, int32_t)>& on_token = nullptr);

  [[nodiscard]] const GenerateStats& stats() const { return stats_; }

 private:
  int32_t sample(const float* logits, float temperature, std::mt19937_64& rng) const;

  Model& model_;
  Backend& backend_;
  int block_size_;
  GenerateStats stats_;
};

}  // namespace pagoda
