// Decode steps replayed from graphs (vLLM's CUDA graph capture): at start, one forward pass
// per batch size in a ladder up to max_num_seqs is recorded on the backend; a step in which
// every sequence brings exactly one token and samples then fills that size's fixed host
// arrays (padding the batch with rows that write no KV and attend to the null block) and
// replays the recording, so the host queues one launch instead of several hundred.
// Backends without graphs (the CPU) get no ladder and run every step eagerly.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "model/model.h"
#include "runner/paged_batch.h"

namespace pagoda {

struct DecodeGraphOptions {
  int max_num_seqs = 0;   // 0: no graphs
  int max_model_len = 0;  // sizes each graph's block tables
};

class DecodeGraphs {
 public:
  // Captures the ladder; model, backend and cache must outlive this object.
  DecodeGraphs(Model& model, Backend& backend, KvCache& cache, const DecodeGraphOptions& options);
  ~DecodeGraphs();
  DecodeGraphs(const DecodeGraphs&) = delete;
  DecodeGraphs& operator=(const DecodeGraphs&) = delete;

  // The logits [chunks.size(), vocab] of a uniform decode step (chunk i's one new token is
  // ids[i]); nullopt when no graph fits it (too many sequences, or a block table wider than
  // max_model_len), and the caller runs the step eagerly. The logits hold until the next run.
  [[nodiscard]] std::optional<Tensor> run(std::span<const SequenceChunk> chunks, std::span<const int32_t> ids);
  // The captured batch sizes, ascending.
  [[nodiscard]] std::vector<int> sizes() const;

  // The ladder for max_num_seqs: 1, 2, 4, 8, then steps of at most a quarter (as vLLM's
  // 8-wide steps, coarser), and max_num_seqs itself.
  [[nodiscard]] static std::vector<int> ladder(int max_num_seqs);

 private:
  struct Graph;
  void capture(Graph& g);
  void fill(Graph& g, std::span<const SequenceChunk> chunks, std::span<const int32_t> ids) const;

  Model& model_;
  Backend& backend_;
  KvCache& cache_;
  int max_blocks_per_seq_;
  std::vector<std::unique_ptr<Graph>> graphs_;  // ascending sizes; the arrays never move
};

}  // namespace pagoda
