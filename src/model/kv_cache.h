// The paged KV cache tensors of one model: for every layer a K and a V tensor of shape
// [num_blocks, block_size, kv_heads, head_dim], allocated by the backend. Which block
// belongs to which sequence is decided above (block tables in AttentionMetadata).
#pragma once

#include <vector>

#include "backend/backend.h"
#include "loader/model_spec.h"

namespace pagoda {

class KvCache {
 public:
  KvCache(Backend& backend, const ModelSpec& spec, int num_blocks, int block_size);

  [[nodiscard]] int num_blocks() const { return num_blocks_; }
  [[nodiscard]] int block_size() const { return block_size_; }
  [[nodiscard]] Tensor& k(int layer) { return k_[static_cast<size_t>(layer)]; }
  [[nodiscard]] Tensor& v(int layer) { return v_[static_cast<size_t>(layer)]; }

  // Bytes one token takes across all layers (K and V) in caches of dtype (the backend's
  // kv_cache_dtype()).
  [[nodiscard]] static size_t bytes_per_token(const ModelSpec& spec, DType dtype);

 private:
  int num_blocks_;
  int block_size_;
  std::vector<Tensor> k_;
  std::vector<Tensor> v_;
};

}  // namespace pagoda
