#include "runner/paged_batch.h"

#include <algorithm>

#include "core/error.h"

namespace pagoda {

PagedBatch::PagedBatch(std::span<const SequenceChunk> chunks, int block_size) {
  size_t max_blocks = 1;
  for (const SequenceChunk& c : chunks) max_blocks = std::max(max_blocks, c.block_ids.size());
  query_start_loc_.push_back(0);
  for (const SequenceChunk& c : chunks) {
    const int total = c.num_computed + c.num_new;
    // The caller's contract: enough blocks for every token of this step.
    PAGODA_CHECK(c.num_new > 0 && static_cast<size_t>((total + block_size - 1) / block_size) <= c.block_ids.size());
    for (int p = c.num_computed; p < total; ++p) {
      positions_.push_back(p);
      const int64_t block = c.block_ids[static_cast<size_t>(p / block_size)];
      slot_mapping_.push_back(block * block_size + p % block_size);
    }
    seq_lens_.push_back(total);
    query_start_loc_.push_back(static_cast<int32_t>(positions_.size()));
    last_rows_.push_back(static_cast<int32_t>(positions_.size()) - 1);
    const size_t row = block_tables_.size();
    block_tables_.resize(row + max_blocks, 0);  // padded with the null block
    std::copy(c.block_ids.begin(), c.block_ids.end(), block_tables_.begin() + static_cast<std::ptrdiff_t>(row));
  }
  meta_.num_tokens = static_cast<int>(positions_.size());
  meta_.num_seqs = static_cast<int>(chunks.size());
  meta_.query_start_loc = query_start_loc_.data();
  meta_.seq_lens = seq_lens_.data();
  meta_.block_tables = block_tables_.data();
  meta_.max_blocks_per_seq = static_cast<int>(max_blocks);
  meta_.slot_mapping = slot_mapping_.data();
}

}  // namespace pagoda
