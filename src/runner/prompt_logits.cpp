#include "runner/prompt_logits.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "core/error.h"
#include "runner/paged_batch.h"

namespace pagoda {

std::vector<float> prompt_logits(Model& model, Backend& backend, const std::vector<int32_t>& ids, int chunk,
                                 int block_size) {
  if (ids.empty()) fail("prompt_logits: empty prompt");
  if (chunk < 1 || block_size < 1) fail("prompt_logits: chunk and block_size must be >= 1");
  const int n = static_cast<int>(ids.size());
  const int blocks_needed = (n + block_size - 1) / block_size;
  KvCache cache(backend, model.spec(), 1 + 2 * blocks_needed, block_size);
  // Scattered block ids from twice the blocks needed, so no block table is contiguous.
  std::vector<int32_t> blocks(static_cast<size_t>(2 * blocks_needed));
  std::iota(blocks.begin(), blocks.end(), 1);
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937(7));
  blocks.resize(static_cast<size_t>(blocks_needed));

  const auto vocab = static_cast<size_t>(model.spec().vocab_size);
  std::vector<float> logits(static_cast<size_t>(n) * vocab);
  for (int start = 0; start < n; start += chunk) {
    const int take = std::min(chunk, n - start);
    const SequenceChunk c{blocks, start, take};
    PagedBatch batch({&c, 1}, block_size);
    std::vector<int32_t> rows(static_cast<size_t>(take));
    std::iota(rows.begin(), rows.end(), 0);
    const std::vector<int32_t> chunk_ids(ids.begin() + start, ids.begin() + start + take);
    Tensor out = model.forward({chunk_ids, batch.positions(), batch.metadata(), rows}, cache);
    backend.download(out, logits.data() + static_cast<size_t>(start) * vocab);
  }
  return logits;
}

}  // namespace pagoda
