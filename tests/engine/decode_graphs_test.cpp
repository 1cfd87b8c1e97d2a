// Decode steps replayed from graphs against the same steps run eagerly (--enforce-eager).
// The replay test needs a backend with graphs: it runs on the device machine
// (PAGODA_TEST_DEVICE=cuda) and is skipped on the CPU.
#include "engine_test_util.h"
#include "runner/decode_graphs.h"

namespace pagoda::testing {
namespace {

TEST(DecodeGraphs, LadderCoversEveryBatchSizeWithBoundedPadding) {
  EXPECT_EQ(DecodeGraphs::ladder(1), (std::vector<int>{1}));
  EXPECT_EQ(DecodeGraphs::ladder(8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(DecodeGraphs::ladder(12), (std::vector<int>{1, 2, 4, 8, 12}));
  for (const int max : {3, 100, 256, 1000}) {
    const std::vector<int> sizes = DecodeGraphs::ladder(max);
    EXPECT_EQ(sizes.back(), max);
    for (int n = 1; n <= max; ++n) {  // the graph a batch of n replays
      const int size = *std::lower_bound(sizes.begin(), sizes.end(), n);
      EXPECT_LE(size - n, std::max(7, n / 4)) << "batch " << n << " padded to " << size;
    }
  }
}

// Batches of exactly a captured size run the same GEMM shapes and attention splits either
// way, so greedy tokens must be identical; a batch of 3 pads to 4 and must finish normally.
TEST(DecodeGraphs, ReplayedDecodeGivesTheEagerTokens) {
  PAGODA_NEED_SMOLLM2(b);
  if (!b->backend().can_capture()) GTEST_SKIP() << "backend " << b->backend().name() << " has no graphs";
  std::mt19937 rng(21);
  EngineOptions o = small_options();
  o.max_num_seqs = 8;
  EngineOptions eager = o;
  eager.enforce_eager = true;
  const std::vector<std::string> ids = {"r0", "r1", "r2", "r3"};
  for (const int batch : {1, 4, 3}) {
    std::vector<std::vector<int32_t>> prompts;
    for (int i = 0; i < batch; ++i) prompts.push_back(random_prompt(rng, 5 + 9 * i));
    std::map<RequestId, Collected> runs[2];
    for (const bool graphs : {false, true}) {
      auto core = make_core(*b, graphs ? o : eager);
      EXPECT_EQ(core->runner().graph_sizes(), graphs ? DecodeGraphs::ladder(8) : std::vector<int>{});
      for (int i = 0; i < batch; ++i) core->add_request(ids[static_cast<size_t>(i)], prompts[static_cast<size_t>(i)], greedy(24));
      runs[graphs] = drain(*core);
    }
    for (int i = 0; i < batch; ++i) {
      const std::string& id = ids[static_cast<size_t>(i)];
      ASSERT_EQ(runs[1][id].token_ids.size(), 24u) << id;
      if (batch != 3) {
        EXPECT_EQ(runs[1][id].token_ids, runs[0][id].token_ids) << "batch " << batch << ", " << id;
      }
    }
  }
}

}  // namespace
}  // namespace pagoda::testing
