// The model runner driven by the real scheduler (chunked prefill, a small KV pool) against
// the simple loop of BatchGenerator (all prompts prefilled, then decoded in lockstep):
// greedy outputs must agree token for token.
#include <gtest/gtest.h>

#include <random>

#include "../engine/engine_test_util.h"
#include "runner/batch_generator.h"
#include "runner/model_runner.h"
#include "sched/scheduler.h"

namespace pagoda::testing {
namespace {

TEST(ModelRunner, SchedulerDrivenGreedyMatchesBatchGenerator) {
  PAGODA_NEED_SMOLLM2(b);
  std::mt19937 rng(5);
  const int max_tokens = 6;
  std::vector<std::vector<int32_t>> prompts;
  for (const int len : {3, 17, 40, 9}) prompts.push_back(random_prompt(rng, len));

  GenerateOptions g;
  g.max_tokens = max_tokens;
  g.stop_at_eos = false;
  BatchGenerator generator(b->model(), b->backend());
  const auto expected = generator.generate(prompts, g);

  SchedulerConfig config;
  config.max_num_batched_tokens = 24;  // prefills are split over several steps
  config.max_model_len = 64;
  config.num_kv_blocks = 32;
  Scheduler sched(config);
  ModelRunner runner(b->model(), b->backend(), config.num_kv_blocks, config.block_size);
  for (size_t i = 0; i < prompts.size(); ++i) {
    sched.add_request({std::string("r") + std::to_string(i), prompts[i], max_tokens, {}, 0, {}});
  }
  std::map<RequestId, std::vector<int32_t>> got;
  const RunnerSetupFn setup = [](const RequestId&) {
    RunnerRequestSetup s;
    s.params.temperature = 0.0f;
    return s;
  };
  int steps = 0;
  while (sched.has_unfinished_requests() || runner.num_requests() > 0) {
    const SchedulerOutput out = sched.schedule();
    std::map<RequestId, int> computed_before;
    for (const auto& n : out.scheduled_new_reqs) computed_before[n.id] = n.num_computed_tokens;
    for (const auto& c : out.scheduled_cached_reqs) computed_before[c.id] = c.num_computed_tokens;
    const RunnerOutput r = runner.execute(out, setup);
    // Mid-prefill requests sample nothing; the others sample one token.
    for (const auto& [id, n] : out.num_scheduled_tokens) {
      const size_t known = prompts[std::stoul(id.substr(1))].size() + got[id].size();
      EXPECT_EQ(r.sampled.count(id) > 0, static_cast<size_t>(computed_before.at(id) + n) >= known) << id;
    }
    for (const auto& [id, toks] : r.sampled) got[id].insert(got[id].end(), toks.begin(), toks.end());
    (void)sched.update_from_output(out, r.sampled);
    ASSERT_LT(++steps, 200);
  }
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(got[std::string("r") + std::to_string(i)], expected[i]) << i;
  EXPECT_EQ(runner.num_requests(), 0);
}

TEST(ModelRunner, RejectsDiffsThatContradictItsState) {
  PAGODA_NEED_SMOLLM2(b);
  ModelRunner runner(b->model(), b->backend(), 8, 16);
  SchedulerOutput out;
  out.num_scheduled_tokens["ghost"] = 1;
  out.total_num_scheduled_tokens = 1;
  EXPECT_THROW((void)runner.execute(out, [](const RequestId&) { return RunnerRequestSetup{}; }), Error);
  SchedulerOutput cached;
  cached.scheduled_cached_reqs.push_back({"ghost", false, {}, {}, 0});
  EXPECT_THROW((void)runner.execute(cached, [](const RequestId&) { return RunnerRequestSetup{}; }), Error);
}

}  // namespace
}  // namespace pagoda::testing
