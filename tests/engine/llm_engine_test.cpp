// The threaded engine and the offline API: streams deliver the same tokens as the core
// driven directly, a reader that lags gets one merged delta with nothing lost, aborts and
// validation errors reach the caller.
#include <chrono>
#include <thread>

#include "engine/llm.h"
#include "engine/llm_engine.h"
#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

TEST(LLMEngine, StreamsMatchTheCoreAndSlowReadersLoseNothing) {
  PAGODA_NEED_SMOLLM2(b);
  std::mt19937 rng(8);
  const std::vector<int32_t> p1 = random_prompt(rng, 12), p2 = random_prompt(rng, 20);
  const Collected ref1 = run_alone(*b, small_options(), p1, greedy(10));
  const Collected ref2 = run_alone(*b, small_options(), p2, greedy(10));

  LLMEngine engine(smollm2_path(), small_options());
  auto s1 = engine.add_request("a", p1, greedy(10));
  auto s2 = engine.add_request("b", p2, greedy(10));
  // Reader 1 keeps up; reader 2 sleeps and then finds at most a few merged deltas.
  std::string text1;
  std::vector<int32_t> ids1;
  std::optional<FinishReason> reason1;
  while (auto d = s1->next()) {
    text1 += d->text;
    ids1.insert(ids1.end(), d->token_ids.begin(), d->token_ids.end());
    if (d->finished) reason1 = d->finish_reason;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<RequestOutput> deltas2;
  while (auto d = s2->next()) deltas2.push_back(std::move(*d));
  ASSERT_FALSE(deltas2.empty());
  RequestOutput all2 = deltas2.front();
  for (size_t i = 1; i < deltas2.size(); ++i) all2.merge(std::move(deltas2[i]));

  EXPECT_EQ(ids1, ref1.token_ids);
  EXPECT_EQ(text1, ref1.text);
  EXPECT_EQ(reason1, FinishReason::Length);
  EXPECT_EQ(all2.token_ids, ref2.token_ids);
  EXPECT_EQ(all2.text, ref2.text);
  EXPECT_TRUE(all2.finished);
  EXPECT_FALSE(s2->next().has_value());  // the stream stays ended

  SamplingParams bad = greedy(4);
  bad.top_p = 0.0f;
  EXPECT_THROW((void)engine.add_request("c", p1, bad), Error);
  EXPECT_THROW((void)engine.add_request("d", {}, greedy(4)), Error);

  auto s3 = engine.add_request("e", p1, greedy(200));
  engine.abort("e");
  std::optional<FinishReason> reason3;
  size_t n3 = 0;
  while (auto d = s3->next()) {
    n3 += d->token_ids.size();
    if (d->finished) reason3 = d->finish_reason;
  }
  EXPECT_EQ(reason3, FinishReason::Abort);
  EXPECT_LT(n3, 200u);
}

TEST(LLM, GenerateMatchesSingleRequests) {
  PAGODA_NEED_SMOLLM2(b);
  LLM llm(smollm2_path(), small_options());
  const std::vector<std::string> prompts = {"The capital of France is", "1, 2, 3, 4,", "Once upon a time"};
  const auto outs = llm.generate(prompts, greedy(8));
  ASSERT_EQ(outs.size(), prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    const Collected ref = run_alone(*b, small_options(), b->tokenizer().encode(prompts[i], true), greedy(8));
    EXPECT_EQ(outs[i].token_ids, ref.token_ids) << prompts[i];
    EXPECT_EQ(outs[i].text, ref.text);
    EXPECT_EQ(outs[i].finish_reason, FinishReason::Length);
  }
  SamplingParams bad = greedy(8);
  bad.n = 2;
  EXPECT_THROW((void)llm.generate(prompts, bad), Error);
  EXPECT_FALSE(llm.core().has_unfinished_requests());
}

}  // namespace
}  // namespace pagoda::testing
