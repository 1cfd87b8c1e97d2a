// The scheduler under async scheduling (SchedulerConfig::async_scheduling): schedule() runs
// before the previous step's tokens are known, so a request that samples gets a placeholder
// and is scheduled again at once; update_from_output() fills the placeholder later. Checked
// against the synchronous scheduler: the same tokens per request, the same steps' worth of
// work, and no step past max_tokens.
#include <gtest/gtest.h>

#include <deque>
#include <map>

#include "core/error.h"
#include "sched/scheduler.h"
#include "sched/sched_test_util.h"

namespace pagoda {
namespace {

using test::fake_token;
using test::make_params;
using test::prompt_of;

SchedulerConfig config(bool async) {
  SchedulerConfig c;
  c.block_size = 4;
  c.num_kv_blocks = 64;
  c.max_model_len = 64;
  c.max_num_batched_tokens = 64;
  c.async_scheduling = async;
  return c;
}

// The token each scheduled request samples in a step, decided when it is scheduled: the
// fake model's token for the position the step's last computed token fills next.
SampledTokens tokens_at_schedule(const Scheduler& s, const SchedulerOutput& out) {
  SampledTokens sampled;
  for (const auto& [id, n] : out.num_scheduled_tokens) {
    const Request* r = s.find_request(id);
    if (r->num_computed_tokens == r->num_tokens() + r->num_output_placeholders - (s.config().async_scheduling ? 1 : 0)) {
      sampled[id] = {fake_token(id, r->num_computed_tokens)};
    }
  }
  return sampled;
}

struct Drive {
  std::map<RequestId, std::vector<TokenId>> outputs;
  std::map<RequestId, RequestStatus> finished;
  int steps = 0;
  int tokens_scheduled = 0;
};

// Drives a scheduler like the engine does: sync, update after each schedule; async, one
// step behind.
Drive run(Scheduler& s) {
  Drive result;
  std::deque<std::pair<SchedulerOutput, SampledTokens>> in_flight;
  const auto finish_oldest = [&] {
    auto [out, sampled] = std::move(in_flight.front());
    in_flight.pop_front();
    for (const auto& [id, tokens] : sampled) {
      if (s.find_request(id)) result.outputs[id].insert(result.outputs[id].end(), tokens.begin(), tokens.end());
    }
    for (const FinishedRequest& f : s.update_from_output(out, sampled)) result.finished[f.id] = f.status;
  };
  while (s.has_unfinished_requests() || !in_flight.empty()) {
    SchedulerOutput out = s.schedule();
    ++result.steps;
    result.tokens_scheduled += out.total_num_scheduled_tokens;
    SampledTokens sampled = tokens_at_schedule(s, out);
    const bool computes = out.total_num_scheduled_tokens > 0;
    in_flight.emplace_back(std::move(out), std::move(sampled));
    while (in_flight.size() > 1 || (!in_flight.empty() && (!s.config().async_scheduling || !computes))) finish_oldest();
  }
  return result;
}

TEST(SchedulerAsync, SameTokensAsSynchronousWithNoStepPastMaxTokens) {
  Scheduler sync(config(false));
  Scheduler async(config(true));
  for (Scheduler* s : {&sync, &async}) {
    s->add_request(make_params("a", prompt_of(5), 6));
    s->add_request(make_params("b", prompt_of(9, 50), 1));
    RequestParams c = make_params("c", prompt_of(3, 90), 10);
    c.stop_token_ids = {fake_token("c", 6)};  // its fourth output
    s->add_request(std::move(c));
  }
  const Drive want = run(sync);
  const Drive got = run(async);
  EXPECT_EQ(got.outputs, want.outputs);
  EXPECT_EQ(got.finished, want.finished);
  EXPECT_EQ(want.outputs.at("a").size(), 6u);
  EXPECT_EQ(want.outputs.at("c").size(), 4u);
  EXPECT_EQ(want.finished.at("c"), RequestStatus::FinishedStopped);
  // The stop token is seen a step late, so c computes one token more; a and b, which stop at
  // max_tokens, none: their last placeholder is known to be their last.
  EXPECT_EQ(got.tokens_scheduled, want.tokens_scheduled + 1);
  // Async decodes every step: one step more than sync, to collect the last.
  EXPECT_EQ(got.steps, want.steps + 1);
  EXPECT_EQ(async.kv().usage(), 0.0);
}

TEST(SchedulerAsync, PlaceholdersLetTheNextStepDecodeAtOnce) {
  Scheduler s(config(true));
  s.add_request(make_params("a", prompt_of(5), 3));
  const SchedulerOutput first = s.schedule();
  EXPECT_EQ(first.num_scheduled_tokens.at("a"), 5);
  EXPECT_EQ(s.find_request("a")->num_output_placeholders, 1);
  const SchedulerOutput second = s.schedule();  // before the first's token is known
  EXPECT_EQ(second.num_scheduled_tokens.at("a"), 1);
  EXPECT_EQ(s.find_request("a")->num_output_placeholders, 2);
  EXPECT_TRUE(s.update_from_output(first, {{"a", {7}}}).empty());
  EXPECT_EQ(s.find_request("a")->num_output_placeholders, 1);
  EXPECT_EQ(s.find_request("a")->output_token_ids().size(), 1u);
  // The third output is in flight after this one: max_tokens is reached, nothing to schedule.
  const SchedulerOutput third = s.schedule();
  EXPECT_EQ(third.num_scheduled_tokens.at("a"), 1);
  EXPECT_EQ(s.schedule().total_num_scheduled_tokens, 0);
  EXPECT_TRUE(s.update_from_output(second, {{"a", {8}}}).empty());
  const std::vector<FinishedRequest> done = s.update_from_output(third, {{"a", {9}}});
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, RequestStatus::FinishedLengthCapped);
  // A token nobody was scheduled to sample is refused.
  s.add_request(make_params("b", prompt_of(5), 3));
  const SchedulerOutput b = s.schedule();
  EXPECT_THROW(s.update_from_output(b, {{"b", {1, 2}}}), Error);
}

TEST(SchedulerAsync, APreemptedRequestKeepsTheTokenItWasSampling) {
  SchedulerConfig c = config(true);
  c.num_kv_blocks = 5;  // 4 usable blocks of 4 tokens
  c.max_model_len = 16;
  Scheduler s(c);
  s.add_request(make_params("a", prompt_of(7), 8));
  s.add_request(make_params("b", prompt_of(7, 20), 8));
  const SchedulerOutput first = s.schedule();  // both prefill: 2 blocks each, the pool is full
  ASSERT_EQ(first.total_num_scheduled_tokens, 14);
  // Both decode their placeholder position (slot 8 of 8 in their second block), then need a
  // third block: b, the later arrival, is preempted for a.
  const SchedulerOutput second = s.schedule();
  const SchedulerOutput third = s.schedule();
  EXPECT_FALSE(third.preempted_req_ids.empty());
  const RequestId victim = third.preempted_req_ids.front();
  const Request* v = s.find_request(victim);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->status, RequestStatus::Preempted);
  EXPECT_GT(v->num_output_placeholders, 0);
  // Its tokens from the steps in flight still arrive and are kept; it resumes with them.
  (void)s.update_from_output(first, {{"a", {100}}, {"b", {200}}});
  (void)s.update_from_output(second, {{"a", {101}}, {"b", {201}}});
  EXPECT_EQ(v->num_output_placeholders, 0);
  EXPECT_EQ(v->output_token_ids().size(), 2u);
}

TEST(SchedulerAsync, RecomputeDropsThePlaceholdersAndStartsOver) {
  Scheduler s(config(true));
  s.add_request(make_params("a", prompt_of(5), 8));
  const SchedulerOutput first = s.schedule();
  const SchedulerOutput second = s.schedule();
  EXPECT_EQ(s.find_request("a")->num_output_placeholders, 2);
  s.recompute("a");  // the device handed the first step's draw back
  const Request* a = s.find_request("a");
  EXPECT_EQ(a->num_output_placeholders, 0);
  EXPECT_EQ(a->status, RequestStatus::Preempted);
  EXPECT_EQ(a->num_computed_tokens, 0);
  EXPECT_EQ(s.kv().usage(), 0.0);
  (void)s.update_from_output(first, {});  // no token: it was handed back
  const SchedulerOutput again = s.schedule();
  EXPECT_EQ(again.preempted_req_ids, std::vector<RequestId>{"a"});  // the runner drops its state
  ASSERT_EQ(again.scheduled_cached_reqs.size(), 1u);
  EXPECT_TRUE(again.scheduled_cached_reqs[0].resumed_from_preemption);
  EXPECT_EQ(again.num_scheduled_tokens.at("a"), 5);  // the whole prompt again
  (void)s.update_from_output(second, {});  // the runner dropped its token of this step
  EXPECT_TRUE(s.update_from_output(again, {{"a", {42}}}).empty());
  EXPECT_EQ(a->output_token_ids().size(), 1u);
}

}  // namespace
}  // namespace pagoda
