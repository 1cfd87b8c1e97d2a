#include "kv/free_block_queue.h"

#include <gtest/gtest.h>

#include <list>
#include <random>

namespace pagoda {
namespace {

std::vector<KVBlock> make_blocks(int n) {
  std::vector<KVBlock> blocks(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) blocks[static_cast<size_t>(i)].id = i;
  return blocks;
}

TEST(FreeBlockQueue, KeepsOrderThroughRemoveAndAppend) {
  std::vector<KVBlock> blocks = make_blocks(6);
  FreeBlockQueue q(blocks);
  for (BlockId id = 1; id <= 5; ++id) q.push_back(id);
  EXPECT_EQ(q.to_vector(), (std::vector<BlockId>{1, 2, 3, 4, 5}));
  q.remove(3);  // middle
  q.remove(5);  // tail
  EXPECT_EQ(q.to_vector(), (std::vector<BlockId>{1, 2, 4}));
  EXPECT_FALSE(blocks[3].in_free_queue);
  EXPECT_EQ(q.pop_front(), 1);
  q.push_back(3);
  q.push_back(1);
  EXPECT_EQ(q.to_vector(), (std::vector<BlockId>{2, 4, 3, 1}));
  EXPECT_EQ(q.size(), 4u);
  while (!q.empty()) (void)q.pop_front();
  EXPECT_TRUE(q.to_vector().empty());
  q.push_back(4);
  EXPECT_EQ(q.to_vector(), (std::vector<BlockId>{4}));
}

// Random operations against std::list as the obviously-correct reference.
TEST(FreeBlockQueue, MatchesListReference) {
  constexpr int kBlocks = 40;
  std::vector<KVBlock> blocks = make_blocks(kBlocks);
  FreeBlockQueue q(blocks);
  std::list<BlockId> ref;
  std::mt19937 rng(1);
  for (int step = 0; step < 20000; ++step) {
    const BlockId id = static_cast<BlockId>(rng() % kBlocks);
    const bool in = std::find(ref.begin(), ref.end(), id) != ref.end();
    switch (rng() % 3) {
      case 0:
        if (!in) {
          q.push_back(id);
          ref.push_back(id);
        }
        break;
      case 1:
        if (in) {
          q.remove(id);
          ref.remove(id);
        }
        break;
      default:
        if (!ref.empty()) {
          ASSERT_EQ(q.pop_front(), ref.front());
          ref.pop_front();
        }
    }
    ASSERT_EQ(q.size(), ref.size());
    ASSERT_EQ(q.to_vector(), std::vector<BlockId>(ref.begin(), ref.end()));
  }
}

}  // namespace
}  // namespace pagoda
