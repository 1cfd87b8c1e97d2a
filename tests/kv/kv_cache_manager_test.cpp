// Pins exact block ids, ref counts and free-queue order, in the manner of vLLM's
// tests/v1/core/test_prefix_caching.py. Expected values follow from the rules: the free
// queue starts 1..N-1, allocation pops its head, free appends a request's blocks tail first.
#include "kv/kv_cache_manager.h"

#include <gtest/gtest.h>

#include "kv/kv_test_util.h"

namespace pagoda {
namespace {

using test::concat;
using test::FakeRequest;
using test::iota_tokens;
using Ids = std::vector<BlockId>;

constexpr int kBlockSize = 16;

KVCacheManager make_manager(int num_blocks, bool caching = true) {
  return KVCacheManager({num_blocks, kBlockSize, caching});
}

// Runs a request through prefix lookup + allocation for its whole prompt, then marks it
// computed and caches its full blocks, as the scheduler and runner would.
Ids admit(KVCacheManager& kv, FakeRequest& r) {
  const ComputedBlocks hit = kv.get_computed_blocks(r.view());
  const int n = static_cast<int>(r.tokens.size()) - hit.num_computed_tokens;
  const auto fresh = kv.allocate_slots(r.view(), n, hit.num_computed_tokens, hit.blocks);
  EXPECT_TRUE(fresh.has_value());
  r.num_computed_tokens = static_cast<int>(r.tokens.size());
  kv.cache_full_blocks(r.view(), r.num_computed_tokens);
  return fresh ? fresh->ids() : Ids{};
}

int ref(const KVCacheManager& kv, BlockId id) { return kv.pool().block(id).ref_cnt; }

TEST(KVCacheManager, PrefillWithSharedPrefix) {
  KVCacheManager kv = make_manager(11);
  const std::vector<TokenId> common = iota_tokens(3 * kBlockSize);

  FakeRequest r0{"0", concat(common, {100, 101, 102})};
  const ComputedBlocks miss = kv.get_computed_blocks(r0.view());
  EXPECT_TRUE(miss.blocks.empty());
  EXPECT_EQ(miss.num_computed_tokens, 0);
  EXPECT_EQ(admit(kv, r0), (Ids{1, 2, 3, 4}));
  EXPECT_EQ(kv.pool().num_cached_blocks(), 3);  // block 4 is partial
  for (BlockId id : {1, 2, 3}) EXPECT_TRUE(kv.pool().block(id).hash.has_value());
  EXPECT_FALSE(kv.pool().block(4).hash.has_value());

  FakeRequest r1{"1", concat(common, {200, 201, 202, 203, 204})};
  const ComputedBlocks hit = kv.get_computed_blocks(r1.view());
  EXPECT_EQ(hit.blocks.ids(), (Ids{1, 2, 3}));
  EXPECT_EQ(hit.num_computed_tokens, 3 * kBlockSize);
  const auto fresh = kv.allocate_slots(r1.view(), 5, hit.num_computed_tokens, hit.blocks);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->ids(), (Ids{5}));
  EXPECT_EQ(kv.block_ids("1"), (Ids{1, 2, 3, 5}));
  for (BlockId id : {1, 2, 3}) EXPECT_EQ(ref(kv, id), 2);
  EXPECT_EQ(ref(kv, 4), 1);
  EXPECT_EQ(ref(kv, 5), 1);
  EXPECT_EQ(kv.pool().free_queue(), (Ids{6, 7, 8, 9, 10}));

  const PrefixCacheStats s = kv.prefix_cache_stats();
  EXPECT_EQ(s.requests, 3);  // r0 was looked up twice (above and in admit)
  EXPECT_EQ(s.queries, 51 + 51 + 53);
  EXPECT_EQ(s.hits, 48);

  // Freed tail first: 4 goes back alone (1..3 still held by r1), then 5, 3, 2, 1.
  kv.free("0");
  EXPECT_EQ(kv.pool().free_queue(), (Ids{6, 7, 8, 9, 10, 4}));
  for (BlockId id : {1, 2, 3}) EXPECT_EQ(ref(kv, id), 1);
  kv.free("1");
  EXPECT_EQ(kv.pool().free_queue(), (Ids{6, 7, 8, 9, 10, 4, 5, 3, 2, 1}));
  EXPECT_EQ(kv.pool().num_cached_blocks(), 3);  // freed but still cached
  EXPECT_EQ(kv.usage(), 0.0);

  // A hit revives cached blocks out of the free queue; the new block comes from its head.
  FakeRequest r2{"2", concat(common, {300})};
  EXPECT_EQ(admit(kv, r2), (Ids{6}));
  EXPECT_EQ(kv.block_ids("2"), (Ids{1, 2, 3, 6}));
  EXPECT_EQ(kv.pool().free_queue(), (Ids{7, 8, 9, 10, 4, 5}));
  for (BlockId id : {1, 2, 3}) EXPECT_EQ(ref(kv, id), 1);
  EXPECT_DOUBLE_EQ(kv.usage(), 0.4);
}

TEST(KVCacheManager, AllocationEvictsCachedBlocksInQueueOrder) {
  KVCacheManager kv = make_manager(11);
  FakeRequest r0{"0", iota_tokens(3 * kBlockSize + 1)};
  EXPECT_EQ(admit(kv, r0), (Ids{1, 2, 3, 4}));
  kv.free("0");
  EXPECT_EQ(kv.pool().free_queue(), (Ids{5, 6, 7, 8, 9, 10, 4, 3, 2, 1}));

  // Eight fresh blocks: 5..10, then 4 (uncached), then 3 is evicted, the chain's tail.
  FakeRequest r1{"1", iota_tokens(8 * kBlockSize, 1000)};
  EXPECT_EQ(admit(kv, r1), (Ids{5, 6, 7, 8, 9, 10, 4, 3}));
  EXPECT_EQ(kv.pool().free_queue(), (Ids{2, 1}));
  // r0's blocks 1, 2 stay cached, block 3 lost r0's hash and now holds one of r1's 8.
  EXPECT_EQ(kv.pool().num_cached_blocks(), 2 + 8);

  // r0's prompt again: blocks 1 and 2 still hit, block 3 was evicted.
  FakeRequest r2{"2", r0.tokens};
  const ComputedBlocks hit = kv.get_computed_blocks(r2.view());
  EXPECT_EQ(hit.blocks.ids(), (Ids{1, 2}));
  EXPECT_EQ(hit.num_computed_tokens, 2 * kBlockSize);
  // Needs 4 blocks: 2 hits (both in the free queue) + 2 new, but only those 2 are free.
  EXPECT_FALSE(kv.allocate_slots(r2.view(), 17, 32, hit.blocks));
  EXPECT_EQ(kv.pool().free_queue(), (Ids{2, 1}));  // a failed allocation changes nothing
  EXPECT_EQ(ref(kv, 1), 0);
  EXPECT_TRUE(kv.block_ids("2").empty());
  EXPECT_EQ(kv.num_tracked_requests(), 1u);
}

TEST(KVCacheManager, NeverHitsTheWholePrompt) {
  KVCacheManager kv = make_manager(11);
  FakeRequest r0{"0", iota_tokens(3 * kBlockSize)};
  EXPECT_EQ(admit(kv, r0), (Ids{1, 2, 3}));
  FakeRequest r1{"1", r0.tokens};
  const ComputedBlocks hit = kv.get_computed_blocks(r1.view());
  EXPECT_EQ(hit.blocks.ids(), (Ids{1, 2}));  // the last token must still be computed
  const auto fresh = kv.allocate_slots(r1.view(), kBlockSize, hit.num_computed_tokens, hit.blocks);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->ids(), (Ids{4}));
  // Computing block 4 again gives r0's hash for block 3: it stays an uncached duplicate.
  r1.num_computed_tokens = 48;
  kv.cache_full_blocks(r1.view(), 48);
  EXPECT_FALSE(kv.pool().block(4).hash.has_value());
  EXPECT_EQ(kv.pool().num_cached_blocks(), 3);
}

TEST(KVCacheManager, DecodeGrowsOneBlockAtABoundary) {
  KVCacheManager kv = make_manager(5);
  FakeRequest r{"0", iota_tokens(kBlockSize - 1)};
  EXPECT_EQ(admit(kv, r), (Ids{1}));
  r.tokens.push_back(77);  // sampled: fills block 1
  auto fresh = kv.allocate_slots(r.view(), 1);
  ASSERT_TRUE(fresh);
  EXPECT_TRUE(fresh->empty());
  r.num_computed_tokens = kBlockSize;
  kv.cache_full_blocks(r.view(), r.num_computed_tokens);
  EXPECT_TRUE(kv.pool().block(1).hash.has_value());
  r.tokens.push_back(78);  // token 17 needs block 2
  fresh = kv.allocate_slots(r.view(), 1);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->ids(), (Ids{2}));
  EXPECT_EQ(kv.block_ids("0"), (Ids{1, 2}));
  EXPECT_DOUBLE_EQ(kv.usage(), 0.5);
}

TEST(KVCacheManager, CacheSaltSeparatesTenants) {
  KVCacheManager kv = make_manager(11);
  FakeRequest a{"a", iota_tokens(2 * kBlockSize + 1), {"alice", 0}};
  EXPECT_EQ(admit(kv, a), (Ids{1, 2, 3}));
  FakeRequest b{"b", a.tokens, {"bob", 0}};
  EXPECT_TRUE(kv.get_computed_blocks(b.view()).blocks.empty());
  FakeRequest a2{"a2", a.tokens, {"alice", 0}};
  EXPECT_EQ(kv.get_computed_blocks(a2.view()).blocks.ids(), (Ids{1, 2}));
}

TEST(KVCacheManager, DisabledCachingNeverHits) {
  KVCacheManager kv = make_manager(11, /*caching=*/false);
  FakeRequest r0{"0", iota_tokens(40)};
  EXPECT_EQ(admit(kv, r0), (Ids{1, 2, 3}));
  EXPECT_EQ(kv.pool().num_cached_blocks(), 0);
  FakeRequest r1{"1", r0.tokens};
  EXPECT_TRUE(kv.get_computed_blocks(r1.view()).blocks.empty());
}

// Every block hashes the same: the stored tokens, not the hash, decide a hit.
TEST(KVCacheManager, HashCollisionNeverSharesBlocks) {
  BlockHash constant;
  constant.bytes.fill(0xab);
  KVCacheManager kv({11, kBlockSize, true}, [&](const BlockHash&, std::span<const TokenId>,
                                                const ExtraKeys&) { return constant; });
  FakeRequest a{"a", iota_tokens(kBlockSize + 1)};
  EXPECT_EQ(admit(kv, a), (Ids{1, 2}));
  EXPECT_EQ(kv.pool().num_cached_blocks(), 1);

  FakeRequest b{"b", iota_tokens(kBlockSize + 1, 500)};  // other tokens, same hash
  const ComputedBlocks hit = kv.get_computed_blocks(b.view());
  EXPECT_TRUE(hit.blocks.empty());
  EXPECT_EQ(kv.prefix_cache_stats().collisions, 1);
  const auto fresh = kv.allocate_slots(b.view(), kBlockSize + 1);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->ids(), (Ids{3, 4}));
  EXPECT_EQ(ref(kv, 1), 1);  // still a's alone
  b.num_computed_tokens = kBlockSize + 1;
  kv.cache_full_blocks(b.view(), b.num_computed_tokens);
  EXPECT_FALSE(kv.pool().block(3).hash.has_value());  // the hash slot is a's

  // The same salt-less tokens as a's do hit; a different salt with a's tokens does not.
  FakeRequest c{"c", a.tokens};
  EXPECT_EQ(kv.get_computed_blocks(c.view()).blocks.ids(), (Ids{1}));
  FakeRequest d{"d", a.tokens, {"x", 0}};
  EXPECT_TRUE(kv.get_computed_blocks(d.view()).blocks.empty());
  EXPECT_EQ(kv.prefix_cache_stats().collisions, 2);
}

// Found by the scheduler's random walk: with one hash for everything (here the all-zero
// one, equal to the "no parent" hash), a block of repeated tokens must not be reused at a
// later position of its own chain. Hits are verified against the exact parent block.
TEST(KVCacheManager, CollisionCannotReuseABlockAtAnotherPosition) {
  KVCacheManager kv({11, kBlockSize, true}, [](const BlockHash&, std::span<const TokenId>,
                                               const ExtraKeys&) { return BlockHash{}; });
  FakeRequest a{"a", std::vector<TokenId>(3 * kBlockSize + 1, 5)};
  EXPECT_EQ(admit(kv, a), (Ids{1, 2, 3, 4}));
  EXPECT_EQ(kv.pool().num_cached_blocks(), 1);  // block 1; 2 and 3 lost the hash slot
  FakeRequest b{"b", a.tokens};
  const ComputedBlocks hit = kv.get_computed_blocks(b.view());
  EXPECT_EQ(hit.blocks.ids(), (Ids{1}));  // not {1, 1, 1}
  EXPECT_EQ(hit.num_computed_tokens, kBlockSize);
}

TEST(KVCacheManager, ResetPrefixCacheOnlyWhenIdle) {
  KVCacheManager kv = make_manager(11);
  FakeRequest r0{"0", iota_tokens(33)};
  (void)admit(kv, r0);
  EXPECT_FALSE(kv.reset_prefix_cache());
  EXPECT_EQ(kv.pool().num_cached_blocks(), 2);
  kv.free("0");
  EXPECT_TRUE(kv.reset_prefix_cache());
  EXPECT_EQ(kv.pool().num_cached_blocks(), 0);
  FakeRequest r1{"1", r0.tokens};
  EXPECT_TRUE(kv.get_computed_blocks(r1.view()).blocks.empty());
  // The free queue keeps its order; only the hashes went.
  EXPECT_EQ(kv.pool().free_queue(), (Ids{4, 5, 6, 7, 8, 9, 10, 3, 2, 1}));
}

TEST(KVCacheManager, RejectsUnusableConfig) {
  EXPECT_THROW(KVCacheManager({1, 16, true}), Error);
  EXPECT_THROW(KVCacheManager({8, 0, true}), Error);
}

}  // namespace
}  // namespace pagoda
