// Prefix caching end to end: a second request sharing a long prefix finds it cached
// (prefix-cache hit counters), computes only the rest, and its output equals the output
// of the same request on an engine without prefix caching.
#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

TEST(EnginePrefixCache, SharedPrefixIsHitAndOutputUnchanged) {
  PAGODA_NEED_SMOLLM2(b);
  const int prefix_len = skip_slow() ? 200 : 1000;
  std::mt19937 rng(3);
  EngineOptions o = small_options();
  o.max_model_len = 2048;
  o.kv_cache_memory = int64_t{256} << 20;
  o.max_num_batched_tokens = 512;
  const std::vector<int32_t> prefix = random_prompt(rng, prefix_len);
  std::vector<int32_t> a = prefix, bp = prefix;
  a.insert(a.end(), {101, 102, 103, 104, 105});
  bp.insert(bp.end(), {201, 202, 203, 204, 205, 206, 207});

  auto core = make_core(*b, o);
  core->add_request("a", a, greedy(4));
  (void)drain(*core);
  const PrefixCacheStats before = core->scheduler().stats().prefix_cache;
  core->add_request("b", bp, greedy(6));
  const Collected cached = drain(*core)["b"];
  const PrefixCacheStats after = core->scheduler().stats().prefix_cache;
  // Every full block of the shared prefix, and nothing past it.
  EXPECT_EQ(after.hits - before.hits, prefix_len / o.block_size * o.block_size);

  EngineOptions uncached = o;
  uncached.enable_prefix_caching = false;
  const Collected fresh = run_alone(*b, uncached, bp, greedy(6));
  EXPECT_EQ(cached.token_ids, fresh.token_ids);
  EXPECT_EQ(cached.text, fresh.text);
}

}  // namespace
}  // namespace pagoda::testing
