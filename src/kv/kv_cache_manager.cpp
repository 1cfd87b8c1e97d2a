#include "kv/kv_cache_manager.h"

#include "core/error.h"

namespace pagoda {
namespace {

const KVCacheConfig& checked(const KVCacheConfig& c) {
  if (c.num_blocks < 2)
    fail("kv cache: need at least 2 blocks (one is the null block), got ", c.num_blocks);
  if (c.block_size < 1) fail("kv cache: block_size must be >= 1, got ", c.block_size);
  return c;
}

int cdiv(int a, int b) { return (a + b - 1) / b; }

}  // namespace

KVCacheManager::KVCacheManager(const KVCacheConfig& config, BlockHasher hasher)
    : block_size_(checked(config).block_size),
      caching_(config.enable_prefix_caching),
      hasher_(std::move(hasher)),
      pool_(config.num_blocks) {}

PrefixCacheStats KVCacheManager::prefix_cache_stats() const {
  PrefixCacheStats s = stats_;
  s.collisions = pool_.num_collisions();
  return s;
}

std::span<const TokenId> KVCacheManager::block_tokens(const KVRequest& request, size_t i) const {
  return request.tokens.subspan(i * static_cast<size_t>(block_size_),
                                static_cast<size_t>(block_size_));
}

const std::vector<BlockHash>& KVCacheManager::hashes_upto(RequestBlocks& rb,
                                                          const KVRequest& request, size_t n) {
  PAGODA_CHECK(n * static_cast<size_t>(block_size_) <= request.tokens.size());
  while (rb.hashes.size() < n) {
    const size_t i = rb.hashes.size();
    const BlockHash& parent = i == 0 ? kNoParentHash : rb.hashes[i - 1];
    rb.hashes.push_back(hasher_(parent, block_tokens(request, i), request.extra));
  }
  return rb.hashes;
}

ComputedBlocks KVCacheManager::get_computed_blocks(const KVRequest& request) {
  if (!caching_) return {};
  RequestBlocks& rb = reqs_[request.id];
  PAGODA_CHECK(rb.blocks.empty());
  const int num_tokens = static_cast<int>(request.tokens.size());
  // At most num_tokens - 1 tokens may hit: the last one must run to give logits.
  const size_t max_blocks = static_cast<size_t>(std::max(num_tokens - 1, 0) / block_size_);
  const std::vector<BlockHash>& hashes = hashes_upto(rb, request, max_blocks);
  std::vector<BlockId> hit;
  for (size_t i = 0; i < max_blocks; ++i) {
    const BlockRef parent = i == 0 ? BlockRef{} : pool_.ref(hit.back());
    const auto id =
        pool_.get_cached_block(hashes[i], parent, block_tokens(request, i), request.extra);
    if (!id) break;
    hit.push_back(*id);
  }
  ++stats_.requests;
  stats_.queries += num_tokens;
  const int num_hit_tokens = static_cast<int>(hit.size()) * block_size_;
  stats_.hits += num_hit_tokens;
  return {KVBlocks(std::move(hit)), num_hit_tokens};
}

std::optional<KVBlocks> KVCacheManager::allocate_slots(const KVRequest& request, int num_new_tokens,
                                                       int num_new_computed_tokens,
                                                       const KVBlocks& new_computed_blocks) {
  PAGODA_CHECK(num_new_tokens > 0);
  PAGODA_CHECK(num_new_computed_tokens ==
               static_cast<int>(new_computed_blocks.size()) * block_size_);
  RequestBlocks& rb = reqs_[request.id];
  // Prefix hits only extend a request that holds nothing yet.
  PAGODA_CHECK(new_computed_blocks.empty() || rb.blocks.empty());
  const int num_computed = request.num_computed_tokens + num_new_computed_tokens;
  const int num_required = cdiv(num_computed + num_new_tokens, block_size_);
  const int num_new_blocks =
      std::max(0, num_required - static_cast<int>(rb.blocks.size() + new_computed_blocks.size()));
  // Hit blocks nobody holds sit in the free queue; touching them takes them out of it.
  int num_evictable_hits = 0;
  for (const BlockId id : new_computed_blocks.ids()) {
    if (pool_.block(id).ref_cnt == 0) ++num_evictable_hits;
  }
  if (num_new_blocks > pool_.num_free_blocks() - num_evictable_hits) {
    if (rb.blocks.empty()) reqs_.erase(request.id);
    return std::nullopt;
  }
  if (!new_computed_blocks.empty()) {
    pool_.touch(new_computed_blocks.ids());
    rb.blocks = new_computed_blocks.ids();
    for (const BlockId id : rb.blocks) rb.chain.push_back(pool_.ref(id));
  }
  std::vector<BlockId> fresh = pool_.get_new_blocks(num_new_blocks);
  rb.blocks.insert(rb.blocks.end(), fresh.begin(), fresh.end());
  return KVBlocks(std::move(fresh));
}

void KVCacheManager::cache_full_blocks(const KVRequest& request, int num_computed_tokens) {
  if (!caching_) return;
  const auto it = reqs_.find(request.id);
  if (it == reqs_.end()) return;
  RequestBlocks& rb = it->second;
  const int num_tokens = std::min(num_computed_tokens, static_cast<int>(request.tokens.size()));
  const size_t num_full = static_cast<size_t>(num_tokens / block_size_);
  const size_t n = std::min(num_full, rb.blocks.size());
  if (n <= rb.chain.size()) return;
  const std::vector<BlockHash>& hashes = hashes_upto(rb, request, n);
  for (size_t i = rb.chain.size(); i < n; ++i) {
    const std::span<const TokenId> tokens = block_tokens(request, i);
    const BlockRef parent = i == 0 ? BlockRef{} : rb.chain[i - 1];
    if (pool_.cache_block(
            rb.blocks[i], hashes[i],
            {parent, std::vector<TokenId>(tokens.begin(), tokens.end()), request.extra})) {
      rb.chain.push_back(pool_.ref(rb.blocks[i]));
      continue;
    }
    // The hash is taken. By an equal block (two requests computed the same prefix at
    // once): later blocks chain to that one, and ours stays uncached. By a collision: ours
    // stays uncached and its children can never be reached, which is safe.
    const auto same = pool_.get_cached_block(hashes[i], parent, tokens, request.extra,
                                             /*count_collision=*/false);
    rb.chain.push_back(same ? pool_.ref(*same) : pool_.ref(rb.blocks[i]));
  }
}

void KVCacheManager::free(const std::string& request_id) {
  const auto it = reqs_.find(request_id);
  if (it == reqs_.end()) return;
  const std::vector<BlockId>& blocks = it->second.blocks;
  const std::vector<BlockId> reversed(blocks.rbegin(), blocks.rend());
  pool_.free_blocks(reversed);
  reqs_.erase(it);
}

std::vector<BlockId> KVCacheManager::block_ids(const std::string& request_id) const {
  const auto it = reqs_.find(request_id);
  return it == reqs_.end() ? std::vector<BlockId>{} : it->second.blocks;
}

}  // namespace pagoda
