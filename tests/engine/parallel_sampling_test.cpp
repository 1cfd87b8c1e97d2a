// Parallel sampling (n > 1) on SmolLM2: each seeded choice equals a request of its own with
// seed + i, the choices share the prompt's blocks through the prefix cache, aborting the
// parent ends every choice and returns every KV block, and the front ends (LLMEngine
// streams, LLM::generate) see all n choices.
#include <set>

#include "core/error.h"
#include "engine/llm.h"
#include "engine/llm_engine.h"
#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

SamplingParams seeded(int n, int max_tokens) {
  SamplingParams p;
  p.n = n;
  p.temperature = 0.9f;
  p.seed = 1234;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;
  return p;
}

struct Choices {
  std::map<int, Collected> by_index;
  std::map<int, std::optional<double>> queue_time_s;
};

// Steps the core until idle, merging deltas per (id, choice index).
std::map<RequestId, Choices> drain_choices(EngineCore& core) {
  std::map<RequestId, Choices> acc;
  while (core.has_unfinished_requests()) {
    for (const RequestOutput& d : core.step()) {
      Choices& ch = acc[d.id];
      Collected& c = ch.by_index[d.index];
      EXPECT_EQ(c.num_finals, 0) << d.id << "/" << d.index << ": output after the final one";
      c.text += d.text;
      c.token_ids.insert(c.token_ids.end(), d.token_ids.begin(), d.token_ids.end());
      if (d.queue_time_s) ch.queue_time_s[d.index] = d.queue_time_s;
      if (d.finished) {
        ++c.num_finals;
        c.reason = d.finish_reason;
      }
    }
  }
  return acc;
}

TEST(ParallelSampling, SeededChoicesEqualSingleRequestsWithSeedPlusIndex) {
  PAGODA_NEED_SMOLLM2(b);
  const int n = skip_slow() ? 3 : 4;
  const int max_tokens = skip_slow() ? 4 : 8;
  std::mt19937 rng(7);
  const std::vector<int32_t> prompt = random_prompt(rng, 40);  // two full blocks of 16 to share
  const EngineOptions o = small_options();

  auto core = make_core(*b, o);
  core->add_request("p", prompt, seeded(n, max_tokens));
  EXPECT_EQ(core->num_requests(), 1) << "choices 1.. wait for choice 0's prompt";
  const std::map<RequestId, Choices> got = drain_choices(*core);
  ASSERT_EQ(got.size(), 1u);
  const Choices& choices = got.at("p");
  ASSERT_EQ(choices.by_index.size(), static_cast<size_t>(n));
  // The held choices found choice 0's two full prompt blocks cached.
  EXPECT_GE(core->scheduler().stats().prefix_cache.hits, int64_t{32} * (n - 1));

  std::set<std::vector<int32_t>> distinct;
  for (int i = 0; i < n; ++i) {
    SamplingParams single = seeded(1, max_tokens);
    single.seed = 1234 + i;
    const Collected alone = run_alone(*b, o, prompt, single);
    const Collected& c = choices.by_index.at(i);
    EXPECT_EQ(c.token_ids, alone.token_ids) << "choice " << i;
    EXPECT_EQ(c.text, alone.text) << "choice " << i;
    EXPECT_EQ(c.num_finals, 1) << "choice " << i;
    EXPECT_EQ(c.reason, FinishReason::Length) << "choice " << i;
    ASSERT_TRUE(choices.queue_time_s.count(i) && choices.queue_time_s.at(i)) << "choice " << i;
    EXPECT_GE(*choices.queue_time_s.at(i), 0.0);
    distinct.insert(c.token_ids);
  }
  EXPECT_GT(distinct.size(), 1u) << "every choice drew the same tokens: the seeds were not varied";
  EXPECT_EQ(core->scheduler().kv().usage(), 0.0);
}

TEST(ParallelSampling, UnseededShortPromptStartsEveryChoiceAtOnce) {
  PAGODA_NEED_SMOLLM2(b);
  auto core = make_core(*b, small_options());
  SamplingParams p = seeded(3, 3);
  p.seed.reset();
  core->add_request("short", {1, 2, 3, 4, 5}, p);  // no full block: nothing to share
  EXPECT_EQ(core->num_requests(), 3);
  const auto got = drain_choices(*core);
  ASSERT_EQ(got.at("short").by_index.size(), 3u);
  for (const auto& [i, c] : got.at("short").by_index) EXPECT_EQ(c.token_ids.size(), 3u) << i;
}

TEST(ParallelSampling, AbortingTheParentEndsEveryChoiceAndFreesEveryBlock) {
  PAGODA_NEED_SMOLLM2(b);
  std::mt19937 rng(11);
  const std::vector<int32_t> prompt = random_prompt(rng, 40);
  for (const int steps_before_abort : {0, 1, 3}) {  // held choices, just released, all decoding
    auto core = make_core(*b, small_options());
    core->add_request("p", prompt, seeded(3, 200));
    for (int s = 0; s < steps_before_abort; ++s) (void)core->step();
    if (steps_before_abort > 0) {
      EXPECT_GT(core->scheduler().kv().usage(), 0.0);
    }
    core->abort("p");
    const auto got = drain_choices(*core);
    ASSERT_EQ(got.at("p").by_index.size(), 3u) << steps_before_abort;
    for (const auto& [i, c] : got.at("p").by_index) {
      EXPECT_EQ(c.num_finals, 1) << i;
      EXPECT_EQ(c.reason, FinishReason::Abort) << i;
    }
    EXPECT_EQ(core->scheduler().kv().usage(), 0.0) << steps_before_abort;
    EXPECT_EQ(core->num_requests(), 0);
    EXPECT_EQ(core->parallel_sampling().num_parents(), 0);
    EXPECT_FALSE(core->has_unfinished_requests());
  }
}

TEST(ParallelSampling, RefusesWhatVllmRefusesAndCollidingIds) {
  PAGODA_NEED_SMOLLM2(b);
  auto core = make_core(*b, small_options());
  SamplingParams greedy_n = greedy(4);
  greedy_n.n = 2;  // vLLM: "n must be 1 when using greedy sampling"
  EXPECT_THROW(core->add_request("g", {1, 2, 3}, greedy_n), Error);
  EXPECT_THROW(core->add_request("big", {1, 2, 3}, seeded(129, 4)), Error);
  core->add_request("x#1", {1, 2, 3}, seeded(1, 2));
  EXPECT_THROW(core->add_request("x", {1, 2, 3}, seeded(2, 2)), Error);
  EXPECT_EQ(core->num_requests(), 1) << "a refused parent left choices behind";
  core->add_request("y", {1, 2, 3}, seeded(2, 2));
  EXPECT_THROW(core->add_request("y", {1, 2, 3}, seeded(1, 2)), Error);
  EXPECT_THROW(core->add_request("y#0", {1, 2, 3}, seeded(1, 2)), Error);
  const auto got = drain_choices(*core);
  EXPECT_EQ(got.at("y").by_index.size(), 2u);
  EXPECT_EQ(got.at("x#1").by_index.size(), 1u);
}

TEST(ParallelSampling, LlmEngineStreamCarriesEveryChoiceAndCountsThePromptOnce) {
  if (!std::filesystem::exists(smollm2_path())) GTEST_SKIP() << "model not found";
  LLMEngine engine(smollm2_path(), small_options());
  std::mt19937 rng(3);
  const std::vector<int32_t> prompt = random_prompt(rng, 40);
  auto stream = engine.add_request("s", prompt, seeded(3, 5));
  std::map<int, std::vector<int32_t>> tokens;
  std::map<int, int> finals;
  while (auto d = stream->next()) {
    EXPECT_EQ(d->id, "s");
    tokens[d->index].insert(tokens[d->index].end(), d->token_ids.begin(), d->token_ids.end());
    finals[d->index] += d->finished;
  }
  ASSERT_EQ(tokens.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(tokens[i].size(), 5u) << i;
    EXPECT_EQ(finals[i], 1) << i;
  }
  // The stats refresh after the step that ended the stream; wait for them to settle.
  EngineStats stats = engine.stats();
  for (int tries = 0; tries < 200 && stats.num_generation_tokens < 15; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stats = engine.stats();
  }
  EXPECT_EQ(stats.num_prompt_tokens, 40) << "one prompt, counted once";
  EXPECT_EQ(stats.num_generation_tokens, 15);
  EXPECT_EQ(stats.scheduler.num_running_reqs + stats.scheduler.num_waiting_reqs, 0);

  auto aborted = engine.add_request("a", prompt, seeded(3, 200));
  engine.abort("a");
  std::map<int, int> abort_finals;
  while (auto d = aborted->next()) abort_finals[d->index] += d->finished;
  EXPECT_EQ(abort_finals, (std::map<int, int>{{0, 1}, {1, 1}, {2, 1}}));
}

TEST(ParallelSampling, LlmGenerateReturnsNChoicesPerPrompt) {
  if (!std::filesystem::exists(smollm2_path())) GTEST_SKIP() << "model not found";
  LLM llm(smollm2_path(), small_options());
  const std::vector<std::string> prompts = {"The capital of France is", "Once upon a time"};
  const std::vector<CompletionOutput> outs = llm.generate(prompts, seeded(2, 4));
  ASSERT_EQ(outs.size(), 4u);
  for (size_t k = 0; k < outs.size(); ++k) {
    EXPECT_EQ(outs[k].index, static_cast<int>(k % 2));
    EXPECT_EQ(outs[k].token_ids.size(), 4u);
  }
  // Choice 1 of prompt 1 is the single request with seed + 1.
  SamplingParams single = seeded(1, 4);
  single.seed = 1235;
  EXPECT_EQ(llm.generate({prompts[1]}, single)[0].token_ids, outs[3].token_ids);
}

}  // namespace
}  // namespace pagoda::testing
