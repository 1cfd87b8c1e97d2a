// Test helper: runs a whole prompt through a model in prefill chunks over a paged KV cache
// with deliberately scattered block ids, and returns the logits of every position.
#pragma once

#include <algorithm>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "model/model.h"
#include "runner/paged_batch.h"

namespace pagoda::testing {

inline std::vector<float> all_position_logits(Model& model, Backend& backend,
                                              const std::vector<int32_t>& ids, int chunk,
                                              int block_size = 16) {
  const int n = static_cast<int>(ids.size());
  const int blocks_needed = (n + block_size - 1) / block_size;
  KvCache cache(backend, model.spec(), 1 + 2 * blocks_needed, block_size);
  // Scattered, descending-odd block ids so no block table is contiguous.
  std::vector<int32_t> blocks(static_cast<size_t>(2 * blocks_needed));
  std::iota(blocks.begin(), blocks.end(), 1);
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937(7));
  blocks.resize(static_cast<size_t>(blocks_needed));

  const int vocab = model.spec().vocab_size;
  std::vector<float> logits(static_cast<size_t>(n) * static_cast<size_t>(vocab));
  for (int start = 0; start < n; start += chunk) {
    const int take = std::min(chunk, n - start);
    const SequenceChunk c{blocks, start, take};
    PagedBatch batch({&c, 1}, block_size);
    std::vector<int32_t> rows(static_cast<size_t>(take));
    std::iota(rows.begin(), rows.end(), 0);
    const std::vector<int32_t> chunk_ids(ids.begin() + start, ids.begin() + start + take);
    Tensor out = model.forward({chunk_ids, batch.positions(), batch.metadata(), rows}, cache);
    backend.download(out, logits.data() + static_cast<size_t>(start) * static_cast<size_t>(vocab));
  }
  return logits;
}

inline std::vector<float> read_f32_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(values.size() * sizeof(float)),
            reinterpret_cast<char*>(values.data()));
  return values;
}

inline std::string model_cache_dir() {
  const char* cache = std::getenv("PAGODA_CACHE");
  if (cache != nullptr && *cache != '\0') return cache;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/pagoda";
}

}  // namespace pagoda::testing
