// The pool of KV blocks: ref counts, the free queue in eviction order, and the prefix cache
// (content hash -> full block). A cached block whose ref count drops to 0 stays cached in the
// free queue: a later hit revives it, an allocation that reaches it evicts it. Only the
// KVCacheManager talks to the pool; the scheduler never sees it.
#pragma once

#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/block_hash.h"
#include "kv/free_block_queue.h"
#include "kv/kv_block.h"

namespace pagoda {

// What a cached block was computed from; a hit must match all of it, not just the hash.
// The parent is the exact block (and generation) that held the previous block's KV, so a
// chain of hits is verified end to end by induction, never trusting a hash alone.
struct CachedBlockContent {
  BlockRef parent;  // {kNullBlockId, 0} for a request's first block
  std::vector<TokenId> tokens;
  ExtraKeys extra;
};

class BlockPool {
 public:
  // num_blocks includes the null block, so num_blocks - 1 are usable; needs num_blocks >= 2.
  explicit BlockPool(int num_blocks);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  [[nodiscard]] int num_blocks() const { return static_cast<int>(blocks_.size()); }
  [[nodiscard]] int num_usable_blocks() const { return num_blocks() - 1; }
  // Blocks in the free queue, cached ones included (they can be evicted at any time).
  [[nodiscard]] int num_free_blocks() const { return static_cast<int>(free_.size()); }
  [[nodiscard]] int num_cached_blocks() const { return static_cast<int>(cached_.size()); }
  // Fraction of usable blocks held by some request.
  [[nodiscard]] double usage() const;

  // Takes n blocks from the head of the free queue with ref count 1, evicting any cached
  // ones. The caller checked n <= num_free_blocks().
  [[nodiscard]] std::vector<BlockId> get_new_blocks(int n);

  // The block cached under hash if its content matches exactly; a hash match whose content
  // differs (a collision) counts in num_collisions() and is a miss.
  [[nodiscard]] std::optional<BlockId> get_cached_block(const BlockHash& hash,
                                                        const BlockRef& parent,
                                                        std::span<const TokenId> tokens,
                                                        const ExtraKeys& extra,
                                                        bool count_collision = true);

  // A request starts holding these (prefix hit) blocks: ref count +1, out of the free queue.
  void touch(std::span<const BlockId> ids);
  // Ref count -1 each; blocks reaching 0 join the free queue in the given order.
  void free_blocks(std::span<const BlockId> ids);

  // Enters a full, referenced block into the prefix cache. Returns false (and leaves the
  // block uncached) when another block already holds this hash.
  bool cache_block(BlockId id, const BlockHash& hash, CachedBlockContent content);

  // Drops every cached hash; refused (false) while any block is in use, as in vLLM.
  bool reset_prefix_cache();

  [[nodiscard]] const KVBlock& block(BlockId id) const {
    return blocks_.at(static_cast<size_t>(id));
  }
  [[nodiscard]] BlockRef ref(BlockId id) const { return {id, block(id).generation}; }
  [[nodiscard]] std::vector<BlockId> free_queue() const { return free_.to_vector(); }
  [[nodiscard]] int64_t num_collisions() const { return num_collisions_; }

 private:
  KVBlock& at(BlockId id) { return blocks_[static_cast<size_t>(id)]; }
  void evict(KVBlock& b);

  std::vector<KVBlock> blocks_;
  FreeBlockQueue free_;
  std::unordered_map<BlockHash, BlockId> cached_;
  std::vector<CachedBlockContent> contents_;  // by block id; valid while the block is cached
  int64_t num_collisions_ = 0;
};

}  // namespace pagoda
