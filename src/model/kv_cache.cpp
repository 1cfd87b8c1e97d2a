#include "model/kv_cache.h"

namespace pagoda {

KvCache::KvCache(Backend& backend, const ModelSpec& spec, int num_blocks, int block_size)
    : num_blocks_(num_blocks), block_size_(block_size) {
  if (num_blocks < 2 || block_size < 1) fail("KV cache needs at least 2 blocks of >= 1 token");
  const Shape shape = {num_blocks, block_size, spec.num_kv_heads, spec.head_dim};
  for (int l = 0; l < spec.num_layers; ++l) {
    k_.push_back(backend.alloc(backend.kv_cache_dtype(), shape));
    v_.push_back(backend.alloc(backend.kv_cache_dtype(), shape));
  }
}

size_t KvCache::bytes_per_token(const ModelSpec& spec, DType dtype) {
  return 2 * static_cast<size_t>(dtype_info(dtype).block_bytes) * static_cast<size_t>(spec.num_layers) *
         static_cast<size_t>(spec.num_kv_heads) * static_cast<size_t>(spec.head_dim);
}

}  // namespace pagoda
