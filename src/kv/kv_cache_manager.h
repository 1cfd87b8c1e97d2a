// Hands out KV blocks to requests and finds their cached prefixes (vLLM v1's
// KVCacheManager for one full-attention cache group). The scheduler asks for slots in
// token counts and gets back opaque KVBlocks; block hashing, ref counting and eviction
// stay in here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv/block_hash.h"
#include "kv/block_pool.h"
#include "kv/kv_blocks.h"

namespace pagoda {

struct KVCacheConfig {
  int num_blocks = 0;   // including the null block
  int block_size = 16;  // tokens per block
  bool enable_prefix_caching = true;
};

// The part of a request the KV manager needs, borrowed for one call.
struct KVRequest {
  const std::string& id;
  std::span<const TokenId> tokens;  // prompt then outputs so far; only ever appended to
  int num_computed_tokens = 0;      // tokens whose KV is in this request's blocks
  const ExtraKeys& extra;
};

struct PrefixCacheStats {
  int64_t requests = 0;    // get_computed_blocks calls
  int64_t queries = 0;     // tokens looked up
  int64_t hits = 0;        // tokens found cached
  int64_t collisions = 0;  // hash matches rejected because the content differed
};

struct ComputedBlocks {
  KVBlocks blocks;
  int num_computed_tokens = 0;
};

class KVCacheManager {
 public:
  // Throws pagoda::Error on an unusable config (fewer than 2 blocks, block_size < 1).
  explicit KVCacheManager(const KVCacheConfig& config, BlockHasher hasher = keyed_block_hasher());

  [[nodiscard]] int block_size() const { return block_size_; }
  [[nodiscard]] int num_usable_blocks() const { return pool_.num_usable_blocks(); }
  [[nodiscard]] int num_free_blocks() const { return pool_.num_free_blocks(); }
  [[nodiscard]] double usage() const { return pool_.usage(); }
  [[nodiscard]] PrefixCacheStats prefix_cache_stats() const;

  // The longest cached prefix of a request that holds no blocks yet. It never covers the
  // whole request: the last token must be computed to produce logits.
  [[nodiscard]] ComputedBlocks get_computed_blocks(const KVRequest& request);

  // Makes room for num_new_tokens more tokens after the request's computed ones and the
  // num_new_computed_tokens found by get_computed_blocks (whose blocks it then holds).
  // Returns the newly allocated blocks, or nullopt (and changes nothing) when the pool is
  // short. num_new_tokens must be > 0.
  [[nodiscard]] std::optional<KVBlocks> allocate_slots(const KVRequest& request, int num_new_tokens,
                                                       int num_new_computed_tokens = 0,
                                                       const KVBlocks& new_computed_blocks = {});

  // Enters the request's full blocks among its first num_computed_tokens tokens into the
  // prefix cache. Called once those tokens' KV has really been computed.
  void cache_full_blocks(const KVRequest& request, int num_computed_tokens);

  // Releases all of a request's blocks, tail first into the free queue so the end of a
  // chain is evicted before its shared beginning. Unknown ids are ignored.
  void free(const std::string& request_id);

  [[nodiscard]] std::vector<BlockId> block_ids(const std::string& request_id) const;
  bool reset_prefix_cache() { return pool_.reset_prefix_cache(); }

  // For tests and invariant checks.
  [[nodiscard]] const BlockPool& pool() const { return pool_; }
  [[nodiscard]] size_t num_tracked_requests() const { return reqs_.size(); }

 private:
  struct RequestBlocks {
    std::vector<BlockId> blocks;
    std::vector<BlockHash> hashes;  // of the request's full blocks, computed on demand
    // For each leading block already cached: the block the prefix cache holds for it (the
    // request's own, or an equal one another request cached first). The parent of the
    // next block to cache.
    std::vector<BlockRef> chain;
  };

  // Hashes of the first n full blocks of the request (n <= tokens / block_size).
  const std::vector<BlockHash>& hashes_upto(RequestBlocks& rb, const KVRequest& request, size_t n);
  [[nodiscard]] std::span<const TokenId> block_tokens(const KVRequest& request, size_t i) const;

  int block_size_;
  bool caching_;
  BlockHasher hasher_;
  BlockPool pool_;
  std::unordered_map<std::string, RequestBlocks> reqs_;
  PrefixCacheStats stats_;
};

}  // namespace pagoda
