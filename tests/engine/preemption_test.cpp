// Preemption by recompute: requests squeezed into a tiny KV pool are preempted, freed and
// recomputed, and still produce exactly the tokens they produce with room to spare.
#include "engine_test_util.h"
#include "model/kv_cache.h"

namespace pagoda::testing {
namespace {

class EnginePreemption : public ::testing::TestWithParam<bool> {};  // async scheduling?

RequestId request_id(size_t i) {
  RequestId id = std::to_string(i);
  id.insert(id.begin(), 'r');  // not "r" + ...: GCC 12 warns of a false overlap (-Wrestrict)
  return id;
}

TEST_P(EnginePreemption, PreemptedRequestsMatchUnpreempted) {
  PAGODA_NEED_SMOLLM2(b);
  const int max_tokens = skip_slow() ? 24 : 40;
  std::mt19937 rng(7);
  EngineOptions tiny = small_options();
  tiny.max_model_len = 64;
  tiny.block_size = 16;
  const size_t token_bytes = KvCache::bytes_per_token(b->model().spec(), b->backend().kv_cache_dtype());
  tiny.kv_cache_memory = static_cast<int64_t>(token_bytes) * 16 * 6;
  tiny.async_scheduling = GetParam();

  std::vector<std::vector<int32_t>> prompts;
  std::vector<SamplingParams> params;
  for (int i = 0; i < 4; ++i) {
    prompts.push_back(random_prompt(rng, 18 + i));
    SamplingParams p = greedy(max_tokens);
    if (i == 1) {  // a seeded sampled request must continue its random stream after resuming
      p.temperature = 0.8f;
      p.seed = 5;
    }
    params.push_back(p);
  }
  auto core = make_core(*b, tiny);
  for (size_t i = 0; i < prompts.size(); ++i) core->add_request(request_id(i), prompts[i], params[i]);
  auto got = drain(*core);
  EXPECT_GT(core->scheduler().stats().num_preemptions, 0) << "the pool was meant to force preemption";
  for (size_t i = 0; i < prompts.size(); ++i) {
    const Collected alone = run_alone(*b, small_options(), prompts[i], params[i]);
    EXPECT_EQ(got[request_id(i)].token_ids, alone.token_ids) << "request " << i;
    EXPECT_EQ(got[request_id(i)].token_ids.size(), static_cast<size_t>(max_tokens));
  }
}

INSTANTIATE_TEST_SUITE_P(Scheduling, EnginePreemption, ::testing::Bool(), scheduling_name);

}  // namespace
}  // namespace pagoda::testing
