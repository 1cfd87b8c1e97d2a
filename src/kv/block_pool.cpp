#include "kv/block_pool.h"

#include <algorithm>

#include "core/error.h"

namespace pagoda {

BlockPool::BlockPool(int num_blocks)
    : blocks_(static_cast<size_t>(num_blocks)), free_(blocks_), contents_(blocks_.size()) {
  PAGODA_CHECK(num_blocks >= 2);
  for (size_t i = 0; i < blocks_.size(); ++i) blocks_[i].id = static_cast<BlockId>(i);
  // The null block is never free: it is held by no request and never handed out.
  for (BlockId id = 1; id < num_blocks; ++id) free_.push_back(id);
}

double BlockPool::usage() const {
  return 1.0 - static_cast<double>(num_free_blocks()) / num_usable_blocks();
}

void BlockPool::evict(KVBlock& b) {
  if (!b.hash) return;
  cached_.erase(*b.hash);
  b.hash.reset();
  contents_[static_cast<size_t>(b.id)] = {};
}

std::vector<BlockId> BlockPool::get_new_blocks(int n) {
  PAGODA_CHECK(n >= 0 && n <= num_free_blocks());
  std::vector<BlockId> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    KVBlock& b = at(free_.pop_front());
    PAGODA_CHECK(b.ref_cnt == 0);
    evict(b);
    b.ref_cnt = 1;
    ++b.generation;
    out.push_back(b.id);
  }
  return out;
}

std::optional<BlockId> BlockPool::get_cached_block(const BlockHash& hash, const BlockRef& parent,
                                                   std::span<const TokenId> tokens,
                                                   const ExtraKeys& extra, bool count_collision) {
  const auto it = cached_.find(hash);
  if (it == cached_.end()) return std::nullopt;
  const CachedBlockContent& c = contents_[static_cast<size_t>(it->second)];
  const bool same = c.parent == parent && c.extra == extra &&
                    std::equal(c.tokens.begin(), c.tokens.end(), tokens.begin(), tokens.end());
  if (!same) {
    if (count_collision) ++num_collisions_;
    return std::nullopt;
  }
  return it->second;
}

void BlockPool::touch(std::span<const BlockId> ids) {
  for (const BlockId id : ids) {
    KVBlock& b = at(id);
    PAGODA_CHECK(id != kNullBlockId);
    if (b.ref_cnt == 0) free_.remove(id);
    ++b.ref_cnt;
  }
}

void BlockPool::free_blocks(std::span<const BlockId> ids) {
  for (const BlockId id : ids) {
    KVBlock& b = at(id);
    PAGODA_CHECK(b.ref_cnt > 0);
    if (--b.ref_cnt == 0) free_.push_back(id);
  }
}

bool BlockPool::cache_block(BlockId id, const BlockHash& hash, CachedBlockContent content) {
  KVBlock& b = at(id);
  PAGODA_CHECK(b.ref_cnt > 0 && !b.hash);
  if (!cached_.emplace(hash, id).second) return false;
  b.hash = hash;
  contents_[static_cast<size_t>(id)] = std::move(content);
  return true;
}

bool BlockPool::reset_prefix_cache() {
  if (num_free_blocks() != num_usable_blocks()) return false;
  for (KVBlock& b : blocks_) evict(b);
  return true;
}

}  // namespace pagoda
