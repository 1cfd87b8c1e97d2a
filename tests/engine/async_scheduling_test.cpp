// Async scheduling (EngineOptions::async_scheduling): the engine schedules and launches step
// N+1 before it finishes step N, so requests carry placeholders for tokens not yet known and
// some compute one step past their end. None of that may show: every request must come out
// exactly as the synchronous engine produces it (tokens, text, finish reason), whatever
// stops it (max_tokens, a stop token, a stop string), whatever its sampling (greedy, seeded,
// penalties, logprobs, n > 1), with prefix-cache hits and chunked prefills beside it, and
// every KV block must come back.
#include "ahead_test_backend.h"
#include "core/error.h"
#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

struct Arrival {
  int step;  // added before this step
  RequestId id;
  std::vector<int32_t> prompt;
  SamplingParams params;
};

std::map<RequestId, Collected> run_arrivals(ModelBundle& b, EngineOptions o, const std::vector<Arrival>& arrivals) {
  auto core = make_core(b, o);
  std::map<RequestId, Collected> acc;
  size_t next = 0;
  for (int step = 0; next < arrivals.size() || core->has_unfinished_requests(); ++step) {
    for (; next < arrivals.size() && arrivals[next].step <= step; ++next) {
      core->add_request(arrivals[next].id, arrivals[next].prompt, arrivals[next].params);
    }
    if (!core->has_unfinished_requests()) continue;
    for (RequestOutput& d : core->step()) {
      if (d.index > 0) {  // the choices of an n > 1 request apart
        d.id.push_back('#');
        d.id.append(std::to_string(d.index));
      }
      merge_delta(acc, d);
    }
  }
  EXPECT_EQ(core->scheduler().stats().kv_cache_usage, 0.0) << "async " << o.async_scheduling.value_or(false);
  EXPECT_EQ(core->runner().num_requests(), 0);
  EXPECT_EQ(core->runner().num_in_flight(), 0);
  EXPECT_EQ(core->num_requests(), 0);
  return acc;
}

EngineOptions mixed_options() {
  EngineOptions o = small_options();
  o.max_num_batched_tokens = 40;  // the long prompt is prefilled in chunks beside decodes
  return o;
}

// Requests that end every way and sample every way, arriving over the first steps.
std::vector<Arrival> mixed_arrivals(ModelBundle& b, int max_tokens) {
  std::mt19937 rng(77);
  const EngineOptions o = mixed_options();

  const std::vector<int32_t> base = random_prompt(rng, 24);
  // Where a free-running greedy continuation of `base` goes: the stops below cut it short.
  const Collected free_run = run_alone(b, o, base, greedy(max_tokens));
  EXPECT_EQ(free_run.token_ids.size(), static_cast<size_t>(max_tokens));
  EXPECT_GT(free_run.text.size(), 8u);

  std::vector<Arrival> arrivals;
  arrivals.push_back({0, "greedy", base, greedy(max_tokens)});
  SamplingParams stop_token = greedy(max_tokens);
  stop_token.stop_token_ids = {free_run.token_ids[static_cast<size_t>(max_tokens / 2)]};
  arrivals.push_back({0, "stop_token", base, stop_token});
  SamplingParams stop_string = greedy(max_tokens);
  stop_string.stop = {free_run.text.substr(free_run.text.size() / 2, 3)};
  arrivals.push_back({1, "stop_string", base, stop_string});
  SamplingParams sampled;
  sampled.temperature = 0.8f;
  sampled.top_p = 0.9f;
  sampled.top_k = 50;
  sampled.seed = 11;
  sampled.max_tokens = max_tokens;
  sampled.ignore_eos = true;
  arrivals.push_back({0, "sampled", random_prompt(rng, 9), sampled});
  SamplingParams penalized = sampled;  // reads its earlier tokens: never sampled ahead
  penalized.presence_penalty = 0.5f;
  penalized.frequency_penalty = 0.3f;
  penalized.repetition_penalty = 1.2f;
  arrivals.push_back({2, "penalized", random_prompt(rng, 12), penalized});
  SamplingParams logprobs = greedy(max_tokens / 2);
  logprobs.logprobs = 3;
  arrivals.push_back({3, "logprobs", random_prompt(rng, 7), logprobs});
  SamplingParams two = sampled;
  two.n = 2;
  two.seed = 5;
  two.max_tokens = max_tokens / 2;
  arrivals.push_back({1, "two", random_prompt(rng, 6), two});
  arrivals.push_back({2, "one_token", random_prompt(rng, 5), greedy(1)});
  std::vector<int32_t> shares(base.begin(), base.begin() + 16);  // a prefix-cache hit on base's first block
  const std::vector<int32_t> tail = random_prompt(rng, 6);
  shares.insert(shares.end(), tail.begin(), tail.end());
  arrivals.push_back({4, "shares", shares, greedy(max_tokens / 2)});
  arrivals.push_back({1, "long_prompt", random_prompt(rng, 100), greedy(6)});
  SamplingParams eos_allowed = sampled;  // may end on an end-of-generation token
  eos_allowed.ignore_eos = false;
  eos_allowed.temperature = 1.3f;
  eos_allowed.seed = 3;
  arrivals.push_back({5, "eos_allowed", random_prompt(rng, 8), eos_allowed});
  return arrivals;
}

void expect_same_outputs(const std::map<RequestId, Collected>& got, const std::map<RequestId, Collected>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [id, w] : want) {
    const Collected& g = got.at(id);
    EXPECT_EQ(g.token_ids, w.token_ids) << id;
    EXPECT_EQ(g.text, w.text) << id;
    EXPECT_EQ(g.reason, w.reason) << id;
    EXPECT_EQ(g.stop_reason, w.stop_reason) << id;
    EXPECT_EQ(g.num_finals, 1) << id;
  }
}

TEST(EngineAsyncScheduling, EveryRequestComesOutAsWithoutIt) {
  PAGODA_NEED_SMOLLM2(b);
  const int max_tokens = skip_slow() ? 10 : 20;
  const std::vector<Arrival> arrivals = mixed_arrivals(*b, max_tokens);
  EngineOptions async = mixed_options();
  async.async_scheduling = true;
  const std::map<RequestId, Collected> want = run_arrivals(*b, mixed_options(), arrivals);
  const std::map<RequestId, Collected> got = run_arrivals(*b, async, arrivals);
  ASSERT_EQ(want.size(), arrivals.size() + 1);  // "two" twice
  expect_same_outputs(got, want);
  // The stops really cut their requests short.
  EXPECT_EQ(want.at("stop_token").reason, FinishReason::Stop);
  EXPECT_LE(want.at("stop_token").token_ids.size(), static_cast<size_t>(max_tokens / 2 + 1));
  EXPECT_EQ(want.at("stop_string").reason, FinishReason::Stop);
  EXPECT_LT(want.at("stop_string").token_ids.size(), static_cast<size_t>(max_tokens));
}

// The same requests where the runner samples ahead (AheadTestBackend): placeholders, ids
// collected a step late, and every sampled row handed back and recomputed.
TEST(EngineAsyncScheduling, SamplingAheadGivesTheSameOutputs) {
  PAGODA_NEED_SMOLLM2(b);
  // It compares against the CPU backend it wraps; on a GPU the real device path runs (the
  // other tests here, the needle, preemption and abort-storm tests).
  if (test_device() != "cpu") GTEST_SKIP() << "the ahead test backend wraps the CPU backend";
  const int max_tokens = skip_slow() ? 10 : 20;
  auto owned = std::make_unique<AheadTestBackend>(make_cpu_backend(0));
  AheadTestBackend& ahead = *owned;
  ModelBundle ahead_bundle(smollm2_path(), std::move(owned));
  const std::vector<Arrival> arrivals = mixed_arrivals(*b, max_tokens);
  const std::map<RequestId, Collected> want = run_arrivals(*b, mixed_options(), arrivals);
  EngineOptions unset = mixed_options();  // async by default: the backend samples ahead
  const std::map<RequestId, Collected> got = run_arrivals(ahead_bundle, unset, arrivals);
  expect_same_outputs(got, want);
  EXPECT_GT(ahead.num_sampled_ahead, 0);
  EXPECT_GT(ahead.num_placeholders, 0);
  EXPECT_GT(ahead.num_handed_back, 0);  // the sampled requests, recomputed
  // Sampling on the device but never ahead takes the synchronous path's hand-backs.
  EngineOptions sync = mixed_options();
  sync.async_scheduling = false;
  const int64_t ahead_before = ahead.num_sampled_ahead;
  expect_same_outputs(run_arrivals(ahead_bundle, sync, arrivals), want);
  EXPECT_EQ(ahead.num_sampled_ahead, ahead_before);
  // A step samples ahead only when every row in it can: with the greedy requests alone,
  // nearly every decode does (all but the last of each run of steps).
  std::vector<Arrival> greedy_only;
  for (const Arrival& a : arrivals) {
    if (a.params.is_greedy() && !a.params.logprobs) greedy_only.push_back(a);
  }
  ASSERT_GE(greedy_only.size(), 5u);
  std::map<RequestId, Collected> greedy_want;
  for (const Arrival& a : greedy_only) greedy_want[a.id] = want.at(a.id);
  int64_t num_tokens = 0;
  for (const auto& [id, c] : greedy_want) num_tokens += static_cast<int64_t>(c.token_ids.size());
  const int64_t before = ahead.num_sampled_ahead;
  expect_same_outputs(run_arrivals(ahead_bundle, unset, greedy_only), greedy_want);
  EXPECT_GT(ahead.num_sampled_ahead - before, num_tokens / 2);
}

TEST(EngineAsyncScheduling, AnIdIsReusableOnceNoStepComputesIt) {
  PAGODA_NEED_SMOLLM2(b);
  std::mt19937 rng(5);
  EngineOptions o = small_options();
  o.async_scheduling = true;
  auto core = make_core(*b, o);
  const std::vector<int32_t> prompt = random_prompt(rng, 10);
  core->add_request("x", prompt, greedy(4));
  EXPECT_TRUE(core->step().empty());  // launched; its outputs come with the next step
  core->abort("x");
  // Aborted, but the step computing it is still in flight: a new "x" would take its token.
  EXPECT_THROW(core->add_request("x", prompt, greedy(4)), Error);
  std::map<RequestId, Collected> acc = drain(*core);
  EXPECT_EQ(acc.at("x").reason, FinishReason::Abort);
  core->add_request("x", prompt, greedy(4));
  acc = drain(*core);
  EXPECT_EQ(acc.at("x").token_ids, run_alone(*b, small_options(), prompt, greedy(4)).token_ids);
  EXPECT_EQ(core->scheduler().stats().kv_cache_usage, 0.0);
}

}  // namespace
}  // namespace pagoda::testing
