// Abort storm: many requests aborted at random moments (waiting, mid-prefill, decoding,
// just finished, twice) leave every KV block free and no request state anywhere.
#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

class EngineAbortStorm : public ::testing::TestWithParam<bool> {};  // async scheduling?

TEST_P(EngineAbortStorm, AbortsLeaveNoState) {
  PAGODA_NEED_SMOLLM2(b);
  const int num_requests = skip_slow() ? 120 : 1000;
  std::mt19937 rng(31);
  EngineOptions o = small_options();
  o.max_num_batched_tokens = 32;  // longer prompts are mid-prefill for a few steps
  o.max_num_seqs = 48;
  o.async_scheduling = GetParam();
  auto core = make_core(*b, o);

  std::vector<RequestId> live;
  std::map<RequestId, Collected> acc;
  int added = 0, aborted = 0;
  std::bernoulli_distribution coin(0.3);
  while (added < num_requests || core->has_unfinished_requests()) {
    for (int i = 0; i < 8 && added < num_requests; ++i, ++added) {
      RequestId id = std::to_string(added);
      id.insert(id.begin(), 'q');
      const bool longer = std::bernoulli_distribution(0.15)(rng);
      const int len = std::uniform_int_distribution<int>(2, longer ? 60 : 6)(rng);
      core->add_request(id, random_prompt(rng, len), greedy(std::uniform_int_distribution<int>(1, 4)(rng)));
      live.push_back(id);
      if (coin(rng)) {  // aborted while waiting
        core->abort(id);
        ++aborted;
      }
    }
    std::vector<RequestId> just_finished;
    for (const RequestOutput& d : core->step()) {
      Collected& c = acc[d.id];
      EXPECT_EQ(c.num_finals, 0) << d.id;
      if (d.finished) {
        ++c.num_finals;
        c.reason = d.finish_reason;
        just_finished.push_back(d.id);
      }
    }
    // Abort some just-finished ones (a no-op) and a random slice of the rest.
    for (const RequestId& id : just_finished) {
      if (coin(rng)) core->abort(id);
    }
    for (const RequestId& id : live) {
      if (std::bernoulli_distribution(0.05)(rng)) {
        core->abort(id);
        core->abort(id);  // twice: the second is a no-op
        ++aborted;
      }
    }
  }
  EXPECT_GT(aborted, num_requests / 10);
  EXPECT_EQ(acc.size(), static_cast<size_t>(num_requests));
  int num_aborted = 0;
  for (const auto& [id, c] : acc) {
    EXPECT_EQ(c.num_finals, 1) << id;
    num_aborted += c.reason == FinishReason::Abort;
  }
  EXPECT_GT(num_aborted, 0);
  EXPECT_EQ(core->scheduler().stats().kv_cache_usage, 0.0);
  EXPECT_EQ(core->scheduler().num_waiting_requests(), 0);
  EXPECT_EQ(core->scheduler().num_running_requests(), 0);
  EXPECT_EQ(core->runner().num_requests(), 0);
  EXPECT_EQ(core->output_processor().num_requests(), 0);
  EXPECT_EQ(core->num_requests(), 0);
}

INSTANTIATE_TEST_SUITE_P(Scheduling, EngineAbortStorm, ::testing::Bool(), scheduling_name);

}  // namespace
}  // namespace pagoda::testing
