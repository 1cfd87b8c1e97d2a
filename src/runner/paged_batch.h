// Builds the flattened-batch metadata (positions, slot mapping, block tables) that the
// model's attention reads, from a simple description: which sequences take part in this
// step and how many new tokens each brings. The block ids come from the caller.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/backend.h"

namespace pagoda {

struct SequenceChunk {
  std::span<const int32_t> block_ids;  // the sequence's blocks, in position order
  int num_computed = 0;                // tokens already in the KV cache
  int num_new = 0;                     // tokens this step adds
};

// Owns the arrays that AttentionMetadata points into; rebuild it for every step.
class PagedBatch {
 public:
  PagedBatch(std::span<const SequenceChunk> chunks, int block_size);

  [[nodiscard]] const AttentionMetadata& metadata() const { return meta_; }
  [[nodiscard]] std::span<const int32_t> positions() const { return positions_; }
  // Index in the flattened batch of each sequence's last new token.
  [[nodiscard]] std::span<const int32_t> last_token_rows() const { return last_rows_; }

 private:
  std::vector<int32_t> query_start_loc_;
  std::vector<int32_t> seq_lens_;
  std::vector<int32_t> block_tables_;
  std::vector<int64_t> slot_mapping_;
  std::vector<int32_t> positions_;
  std::vector<int32_t> last_rows_;
  AttentionMetadata meta_;
};

}  // namespace pagoda
