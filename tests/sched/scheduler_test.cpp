// Pins what each step schedules (token counts, block ids, diffs), in the manner of vLLM's
// tests/v1/core/test_scheduler.py. Expected block ids follow from the KV manager's rules:
// fresh blocks come from the head of the free queue, which starts 1, 2, 3, ...
#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "sched/sched_test_util.h"

namespace pagoda {
namespace {

using test::fake_sample;
using test::fake_token;
using test::make_params;
using test::prompt_of;
using Ids = std::vector<BlockId>;
using Counts = std::unordered_map<RequestId, int>;

SchedulerConfig base_config() {
  SchedulerConfig c;
  c.block_size = 16;
  c.num_kv_blocks = 101;
  c.max_model_len = 512;
  c.max_num_batched_tokens = 2048;
  c.max_num_seqs = 128;
  return c;
}

std::vector<FinishedRequest> step(Scheduler& s, SchedulerOutput* out_copy = nullptr) {
  const SchedulerOutput out = s.schedule();
  if (out_copy) *out_copy = out;
  return s.update_from_output(out, fake_sample(s, out));
}

std::vector<RequestId> sorted_ids(const std::vector<FinishedRequest>& f) {
  std::vector<RequestId> ids;
  for (const auto& x : f) ids.push_back(x.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(Scheduler, AdmitsEveryRequestThatFits) {
  Scheduler s(base_config());
  for (int i = 0; i < 10; ++i)
    s.add_request(make_params(std::to_string(i), prompt_of(20, i * 100)));
  const SchedulerOutput out = s.schedule();
  ASSERT_EQ(out.scheduled_new_reqs.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    const NewRequestData& n = out.scheduled_new_reqs[static_cast<size_t>(i)];
    EXPECT_EQ(n.id, std::to_string(i));
    EXPECT_EQ(n.prompt_token_ids, prompt_of(20, i * 100));
    EXPECT_EQ(n.block_ids, (Ids{2 * i + 1, 2 * i + 2}));
    EXPECT_EQ(n.num_computed_tokens, 0);
    EXPECT_EQ(out.num_scheduled_tokens.at(n.id), 20);
  }
  EXPECT_EQ(out.total_num_scheduled_tokens, 200);
  EXPECT_TRUE(out.scheduled_cached_reqs.empty());
  EXPECT_EQ(s.num_running_requests(), 10);
  EXPECT_EQ(s.num_waiting_requests(), 0);
  EXPECT_EQ(s.find_request("3")->num_computed_tokens, 20);
  EXPECT_EQ(s.find_request("3")->status, RequestStatus::Running);
}

TEST(Scheduler, ChunkedPrefillSplitsTheBudget) {
  SchedulerConfig c = base_config();
  c.max_num_batched_tokens = 64;
  Scheduler s(c);
  s.add_request(make_params("a", prompt_of(100, 0)));
  s.add_request(make_params("b", prompt_of(50, 1000)));

  SchedulerOutput out;
  step(s, &out);
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"a", 64}}));
  ASSERT_EQ(out.scheduled_new_reqs.size(), 1u);
  EXPECT_EQ(out.scheduled_new_reqs[0].block_ids, (Ids{1, 2, 3, 4}));
  EXPECT_EQ(s.num_waiting_requests(), 1);

  step(s, &out);  // a: the remaining 36; b: the 28 left over
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"a", 36}, {"b", 28}}));
  ASSERT_EQ(out.scheduled_cached_reqs.size(), 1u);
  EXPECT_EQ(out.scheduled_cached_reqs[0].id, "a");
  EXPECT_FALSE(out.scheduled_cached_reqs[0].resumed_from_preemption);
  EXPECT_TRUE(out.scheduled_cached_reqs[0].new_token_ids.empty());
  EXPECT_EQ(out.scheduled_cached_reqs[0].new_block_ids, (Ids{5, 6, 7}));
  EXPECT_EQ(out.scheduled_cached_reqs[0].num_computed_tokens, 64);
  ASSERT_EQ(out.scheduled_new_reqs.size(), 1u);
  EXPECT_EQ(out.scheduled_new_reqs[0].block_ids, (Ids{8, 9}));
  EXPECT_EQ(s.find_request("a")->num_output_tokens(), 1);  // prefill done: sampled
  EXPECT_EQ(s.find_request("b")->num_output_tokens(), 0);

  step(s, &out);  // a decodes, b finishes its prefill
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"a", 1}, {"b", 22}}));
  EXPECT_EQ(out.total_num_scheduled_tokens, 23);
  ASSERT_EQ(out.scheduled_cached_reqs.size(), 2u);
  EXPECT_TRUE(out.scheduled_cached_reqs[0].new_block_ids.empty());  // token 100 fits block 7
  EXPECT_EQ(out.scheduled_cached_reqs[1].new_block_ids, (Ids{10, 11}));
  EXPECT_EQ(out.scheduled_cached_reqs[1].num_computed_tokens, 28);
}

TEST(Scheduler, LongPrefillThresholdCapsEachChunk) {
  SchedulerConfig c = base_config();
  c.max_num_batched_tokens = 100;
  c.long_prefill_token_threshold = 20;
  Scheduler s(c);
  s.add_request(make_params("a", prompt_of(50, 0)));
  s.add_request(make_params("b", prompt_of(50, 1000)));
  SchedulerOutput out;
  for (const int chunk : {20, 20, 10, 1, 1}) {
    step(s, &out);
    EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"a", chunk}, {"b", chunk}}));
  }
}

TEST(Scheduler, MaxNumSeqsLimitsRunningRequests) {
  SchedulerConfig c = base_config();
  c.max_num_seqs = 2;
  Scheduler s(c);
  for (const char* id : {"a", "b", "c"}) s.add_request(make_params(id, prompt_of(10), 2));
  SchedulerOutput out;
  EXPECT_TRUE(step(s, &out).empty());
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"a", 10}, {"b", 10}}));
  EXPECT_EQ(s.num_waiting_requests(), 1);
  const auto finished = step(s, &out);  // the second token ends a and b (max_tokens 2)
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"a", 1}, {"b", 1}}));
  EXPECT_EQ(sorted_ids(finished), (std::vector<RequestId>{"a", "b"}));
  for (const auto& f : finished) EXPECT_EQ(f.status, RequestStatus::FinishedLengthCapped);
  step(s, &out);
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"c", 10}}));
  std::sort(out.finished_req_ids.begin(), out.finished_req_ids.end());
  EXPECT_EQ(out.finished_req_ids, (std::vector<RequestId>{"a", "b"}));
  // c has a's and b's prompt, but 10 prompt + 2 output tokens fill no 16-token block:
  // nothing was cached for it to hit.
  EXPECT_EQ(out.scheduled_new_reqs[0].num_computed_tokens, 0);
}

TEST(Scheduler, PrefixHitShortensPrefill) {
  Scheduler s(base_config());
  s.add_request(make_params("a", prompt_of(40)));
  step(s);  // a computed 40 tokens: blocks 1, 2 full and cached, 3 partial
  std::vector<TokenId> prompt_b = prompt_of(32);
  for (TokenId t = 100; t < 110; ++t) prompt_b.push_back(t);
  s.add_request(make_params("b", prompt_b));
  SchedulerOutput out;
  step(s, &out);
  ASSERT_EQ(out.scheduled_new_reqs.size(), 1u);
  EXPECT_EQ(out.scheduled_new_reqs[0].block_ids, (Ids{1, 2, 4}));
  EXPECT_EQ(out.scheduled_new_reqs[0].num_computed_tokens, 32);
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"a", 1}, {"b", 10}}));
  EXPECT_EQ(s.kv().pool().block(1).ref_cnt, 2);
  EXPECT_EQ(s.kv().pool().block(2).ref_cnt, 2);
  EXPECT_EQ(s.kv().pool().block(3).ref_cnt, 1);
  const PrefixCacheStats st = s.stats().prefix_cache;
  EXPECT_EQ(st.queries, 40 + 42);
  EXPECT_EQ(st.hits, 32);
}

TEST(Scheduler, StopTokenMaxTokensAndMaxModelLen) {
  SchedulerConfig c = base_config();
  c.max_model_len = 32;
  Scheduler s(c);
  RequestParams stop = make_params("stop", prompt_of(5), 100);
  stop.stop_token_ids = {7, fake_token("stop", 6)};  // its second generated token
  s.add_request(stop);
  s.add_request(make_params("three", prompt_of(5, 50), 3));
  s.add_request(make_params("long", prompt_of(30, 90), 100));
  std::vector<FinishedRequest> all;
  for (int i = 0; i < 4; ++i) {
    for (const auto& f : step(s)) all.push_back(f);
  }
  // long: 30 + 2 = max_model_len after step 2; stop: its stop token in step 2; three: step 3.
  const std::vector<FinishedRequest> want = {{"long", RequestStatus::FinishedLengthCapped},
                                             {"stop", RequestStatus::FinishedStopped},
                                             {"three", RequestStatus::FinishedLengthCapped}};
  std::sort(all.begin(), all.begin() + 2, [](auto& x, auto& y) { return x.id < y.id; });
  EXPECT_EQ(all, want);
  EXPECT_FALSE(s.has_unfinished_requests());
  EXPECT_EQ(s.stats().kv_cache_usage, 0.0);
}

TEST(Scheduler, AbortWaitingAndRunningIsIdempotent) {
  SchedulerConfig c = base_config();
  c.max_num_seqs = 1;
  Scheduler s(c);
  s.add_request(make_params("run", prompt_of(20)));
  s.add_request(make_params("wait", prompt_of(20, 100)));
  step(s);
  ASSERT_EQ(s.find_request("wait")->status, RequestStatus::Waiting);
  const std::vector<RequestId> ids = {"run", "wait", "unknown"};
  s.finish_requests(ids, RequestStatus::FinishedAborted);
  s.finish_requests(ids, RequestStatus::FinishedAborted);
  EXPECT_FALSE(s.has_unfinished_requests());
  EXPECT_EQ(s.find_request("run"), nullptr);
  EXPECT_EQ(s.stats().kv_cache_usage, 0.0);
  EXPECT_EQ(s.kv().pool().num_free_blocks(), 100);
  SchedulerOutput out = s.schedule();
  EXPECT_EQ(out.finished_req_ids, (std::vector<RequestId>{"run", "wait"}));
  EXPECT_EQ(out.total_num_scheduled_tokens, 0);
  EXPECT_TRUE(s.schedule().finished_req_ids.empty());

  // Aborted between schedule() and update: its sampled token is dropped.
  s.add_request(make_params("late", prompt_of(5)));
  out = s.schedule();
  const SampledTokens sampled = fake_sample(s, out);
  s.finish_requests(std::vector<RequestId>{"late"}, RequestStatus::FinishedAborted);
  EXPECT_TRUE(s.update_from_output(out, sampled).empty());
  EXPECT_THROW(s.finish_requests(ids, RequestStatus::Running), Error);
}

TEST(Scheduler, ResumedFcfsRequestGetsItsWholeState) {
  SchedulerConfig c = base_config();
  c.block_size = 4;
  c.num_kv_blocks = 5;  // 4 usable: two 7-token prompts fill them
  c.max_model_len = 16;
  Scheduler s(c);
  s.add_request(make_params("a", prompt_of(7), 100));
  s.add_request(make_params("b", prompt_of(7, 100), 100));
  SchedulerOutput out;
  step(s, &out);
  EXPECT_EQ(out.scheduled_new_reqs[0].block_ids, (Ids{1, 2}));
  EXPECT_EQ(out.scheduled_new_reqs[1].block_ids, (Ids{3, 4}));
  step(s, &out);  // 8 tokens each: still two blocks each
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"a", 1}, {"b", 1}}));

  // a's 9th token needs a third block: b, admitted last, is preempted.
  step(s, &out);
  EXPECT_EQ(out.preempted_req_ids, (std::vector<RequestId>{"b"}));
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"a", 1}}));
  ASSERT_EQ(out.scheduled_cached_reqs.size(), 1u);
  EXPECT_EQ(out.scheduled_cached_reqs[0].new_block_ids, (Ids{4}));  // b's tail, freed first
  const Request* b = s.find_request("b");
  EXPECT_EQ(b->status, RequestStatus::Preempted);
  EXPECT_EQ(b->num_computed_tokens, 0);
  EXPECT_EQ(b->num_preemptions, 1);
  EXPECT_EQ(s.waiting(), (std::vector<Request*>{const_cast<Request*>(b)}));
  EXPECT_EQ(s.kv().block_ids("b"), Ids{});
  EXPECT_EQ(s.kv().pool().free_queue(), (Ids{3}));
  const std::vector<TokenId> b_tokens = b->all_token_ids();
  ASSERT_EQ(b_tokens.size(), 9u);

  // a runs to max_model_len (16 tokens); b resumes with everything it had.
  bool resumed = false;
  for (int i = 0; i < 20 && s.has_unfinished_requests(); ++i) {
    step(s, &out);
    for (const CachedRequestData& d : out.scheduled_cached_reqs) {
      if (!d.resumed_from_preemption) continue;
      EXPECT_FALSE(resumed);
      resumed = true;
      EXPECT_EQ(d.id, "b");
      EXPECT_EQ(d.new_token_ids, b_tokens);
      EXPECT_EQ(d.new_block_ids, s.kv().block_ids("b"));
      EXPECT_EQ(out.num_scheduled_tokens.at("b"), 9 - d.num_computed_tokens);
    }
  }
  EXPECT_TRUE(resumed);
  EXPECT_FALSE(s.has_unfinished_requests());
  EXPECT_EQ(s.stats().num_preemptions, 1);
  EXPECT_EQ(s.kv().pool().num_free_blocks(), 4);
}

TEST(Scheduler, AbortPreemptedRequest) {
  SchedulerConfig c = base_config();
  c.block_size = 4;
  c.num_kv_blocks = 5;
  c.max_model_len = 16;
  Scheduler s(c);
  s.add_request(make_params("a", prompt_of(7), 100));
  s.add_request(make_params("b", prompt_of(7, 100), 100));
  SchedulerOutput out;
  for (int i = 0; i < 3; ++i) step(s, &out);
  ASSERT_EQ(out.preempted_req_ids, (std::vector<RequestId>{"b"}));
  // A stop string found by the caller ends a request the same way, with its own status.
  s.finish_requests(std::vector<RequestId>{"b"}, RequestStatus::FinishedAborted);
  s.finish_requests(std::vector<RequestId>{"a"}, RequestStatus::FinishedStopped);
  EXPECT_FALSE(s.has_unfinished_requests());
  EXPECT_EQ(s.kv().num_free_blocks(), 4);
  EXPECT_EQ(s.schedule().finished_req_ids, (std::vector<RequestId>{"b", "a"}));
}

TEST(Scheduler, PriorityPreemptsLowestEvenIfAlreadyScheduled) {
  SchedulerConfig c = base_config();
  c.block_size = 4;
  c.num_kv_blocks = 6;  // 5 usable
  c.max_model_len = 20;
  c.policy = SchedulingPolicy::Priority;
  Scheduler s(c);
  s.add_request(make_params("low", prompt_of(3), 100, /*priority=*/9));
  SchedulerOutput out;
  step(s, &out);  // low: block 1
  s.add_request(make_params("high", prompt_of(11, 100), 100, /*priority=*/0));
  step(s, &out);  // high: blocks 2, 3, 4
  EXPECT_EQ(out.scheduled_new_reqs[0].block_ids, (Ids{2, 3, 4}));
  step(s, &out);  // low's 5th token takes block 5; the pool is full
  EXPECT_EQ(out.scheduled_cached_reqs[0].new_block_ids, (Ids{5}));
  EXPECT_EQ(s.kv().num_free_blocks(), 0);

  // low (running first) is scheduled, then high needs a block: low is the victim and
  // gives back the token it was just given.
  step(s, &out);
  EXPECT_EQ(out.preempted_req_ids, (std::vector<RequestId>{"low"}));
  EXPECT_EQ(out.num_scheduled_tokens, (Counts{{"high", 1}}));
  EXPECT_EQ(out.total_num_scheduled_tokens, 1);
  ASSERT_EQ(out.scheduled_cached_reqs.size(), 1u);
  EXPECT_EQ(out.scheduled_cached_reqs[0].id, "high");
  EXPECT_EQ(out.scheduled_cached_reqs[0].new_block_ids, (Ids{5}));
  EXPECT_EQ(s.find_request("low")->status, RequestStatus::Preempted);
  EXPECT_EQ(s.kv().pool().free_queue(), (Ids{1}));
}

TEST(Scheduler, PriorityQueueAdmitsSmallestValueThenEarliest) {
  SchedulerConfig c = base_config();
  c.max_num_seqs = 1;
  c.policy = SchedulingPolicy::Priority;
  Scheduler s(c);
  s.add_request(make_params("x", prompt_of(4), 1, 5));
  s.add_request(make_params("y", prompt_of(4, 10), 1, 1));
  s.add_request(make_params("z", prompt_of(4, 20), 1, 1));
  std::vector<RequestId> order;
  while (s.has_unfinished_requests()) {
    for (const auto& f : step(s)) order.push_back(f.id);
  }
  EXPECT_EQ(order, (std::vector<RequestId>{"y", "z", "x"}));
}

TEST(Scheduler, RejectsInvalidRequestsAndConfigs) {
  Scheduler s(base_config());
  EXPECT_THROW(s.add_request(make_params("e", {})), Error);
  EXPECT_THROW(s.add_request(make_params("long", prompt_of(512))), Error);
  EXPECT_THROW(s.add_request(make_params("zero", prompt_of(3), 0)), Error);
  EXPECT_THROW(s.add_request(make_params("neg", {1, -2})), Error);
  s.add_request(make_params("dup", prompt_of(3)));
  EXPECT_THROW(s.add_request(make_params("dup", prompt_of(3))), Error);

  SchedulerConfig c = base_config();
  c.num_kv_blocks = 32;  // 31 usable < 512 / 16
  EXPECT_THROW((Scheduler(c)), Error);
  c = base_config();
  c.max_num_seqs = 0;
  EXPECT_THROW((Scheduler(c)), Error);
}

TEST(Scheduler, SampledTokensMidPrefillAreAnError) {
  SchedulerConfig c = base_config();
  c.max_num_batched_tokens = 8;
  Scheduler s(c);
  s.add_request(make_params("a", prompt_of(20)));
  const SchedulerOutput out = s.schedule();
  EXPECT_THROW((void)s.update_from_output(out, {{"a", {5}}}), Error);
}

}  // namespace
}  // namespace pagoda
