// Stop strings, stop tokens, EOS, min_tokens and max_tokens, checked against one
// unconstrained greedy run of the same prompt (the reference: cut where the rule says).
#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

class EngineFinish : public ::testing::Test {
 protected:
  void SetUp() override {
    bundle_ = smollm2();
    if (bundle_ == nullptr) GTEST_SKIP() << "model not found: " << smollm2_path();
    prompt_ = bundle_->tokenizer().encode("The history of the city of Paris begins", true);
    base_ = run(greedy(kMax));
    ASSERT_EQ(base_.token_ids.size(), static_cast<size_t>(kMax));
    ASSERT_EQ(base_.reason, FinishReason::Length);
  }
  Collected run(const SamplingParams& p) { return run_alone(*bundle_, small_options(), prompt_, p); }

  static constexpr int kMax = 24;
  ModelBundle* bundle_ = nullptr;
  std::vector<int32_t> prompt_;
  Collected base_;
};

TEST_F(EngineFinish, StreamedTextIsTheDecodedOutput) {
  EXPECT_EQ(base_.text, bundle_->tokenizer().decode(base_.token_ids));
  EXPECT_EQ(base_.num_finals, 1);
}

TEST_F(EngineFinish, StopStringCutsTheText) {
  const std::string& t = base_.text;
  ASSERT_GT(t.size(), 20u);
  const std::string stop = t.substr(t.size() / 2, 3);
  const size_t at = t.find(stop);
  SamplingParams p = greedy(kMax);
  p.stop = {stop};
  const Collected cut = run(p);
  EXPECT_EQ(cut.text, t.substr(0, at));
  EXPECT_EQ(cut.reason, FinishReason::Stop);
  EXPECT_EQ(cut.stop_reason, stop);
  EXPECT_LT(cut.token_ids.size(), base_.token_ids.size());
  // Token ids are a prefix of the unconstrained ones.
  EXPECT_TRUE(std::equal(cut.token_ids.begin(), cut.token_ids.end(), base_.token_ids.begin()));

  p.include_stop_str_in_output = true;
  EXPECT_EQ(run(p).text, t.substr(0, at + stop.size()));
}

TEST_F(EngineFinish, StopTokenEndsWithIt) {
  const int32_t stop = base_.token_ids[5];
  SamplingParams p = greedy(kMax);
  p.stop_token_ids = {stop};
  const Collected cut = run(p);
  const auto first = std::find(base_.token_ids.begin(), base_.token_ids.end(), stop);
  EXPECT_EQ(cut.token_ids, std::vector<int32_t>(base_.token_ids.begin(), first + 1));
  EXPECT_EQ(cut.reason, FinishReason::Stop);
}

TEST_F(EngineFinish, MaxTokensIsLength) {
  const Collected cut = run(greedy(5));
  EXPECT_EQ(cut.token_ids, std::vector<int32_t>(base_.token_ids.begin(), base_.token_ids.begin() + 5));
  EXPECT_EQ(cut.reason, FinishReason::Length);
}

TEST_F(EngineFinish, MinTokensMasksStopTokens) {
  const int32_t stop = base_.token_ids[1];
  SamplingParams p = greedy(12);
  p.stop_token_ids = {stop};
  p.min_tokens = 6;
  const Collected got = run(p);
  ASSERT_GE(got.token_ids.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_NE(got.token_ids[i], stop) << i;
  // Until the first position where the stop token would have been picked, outputs agree.
  EXPECT_EQ(got.token_ids[0], base_.token_ids[0]);
}

TEST_F(EngineFinish, EndOfGenerationUnlessIgnoreEos) {
  const Tokenizer& tok = bundle_->tokenizer();
  const std::vector<int32_t> chat = tok.encode(
      "<|im_start|>user\nSay hello.<|im_end|>\n<|im_start|>assistant\n", false, /*parse_special=*/true);
  SamplingParams p = greedy(48);
  p.ignore_eos = false;
  const Collected got = run_alone(*bundle_, small_options(), chat, p);
  ASSERT_FALSE(got.token_ids.empty());
  const bool eog = tok.is_end_of_generation(got.token_ids.back());
  EXPECT_EQ(got.reason, eog ? FinishReason::Stop : FinishReason::Length);
  for (size_t i = 0; i + 1 < got.token_ids.size(); ++i) EXPECT_FALSE(tok.is_end_of_generation(got.token_ids[i]));
  if (eog) {
    EXPECT_EQ(got.text, tok.decode(got.token_ids));  // the end token is special: not in the text
    p.ignore_eos = true;
    const Collected past = run_alone(*bundle_, small_options(), chat, p);
    EXPECT_EQ(past.token_ids.size(), 48u);
    EXPECT_TRUE(std::equal(got.token_ids.begin(), got.token_ids.end(), past.token_ids.begin()));
  }
}

TEST_F(EngineFinish, InvalidRequestQueuesNothing) {
  auto core = make_core(*bundle_, small_options());
  SamplingParams bad = greedy(4);
  bad.temperature = -1.0f;
  EXPECT_THROW(core->add_request("x", prompt_, bad), Error);
  EXPECT_THROW(core->add_request("y", {1, 2, 99999999}, greedy(4)), Error);
  EXPECT_THROW(core->add_request("z", std::vector<int32_t>(300, 5), greedy(4)), Error);  // > max_model_len
  EXPECT_THROW(core->add_request("e", {}, greedy(4)), Error);
  EXPECT_FALSE(core->has_unfinished_requests());
  EXPECT_EQ(core->num_requests(), 0);
  EXPECT_EQ(core->output_processor().num_requests(), 0);
  core->add_request("x", prompt_, greedy(3));  // the id is free: nothing was kept
  EXPECT_THROW(core->add_request("x", prompt_, greedy(3)), Error);
  EXPECT_EQ(drain(*core)["x"].token_ids.size(), 3u);
}

TEST_F(EngineFinish, AbortEndsWithAbort) {
  auto core = make_core(*bundle_, small_options());
  core->add_request("a", prompt_, greedy(kMax));
  (void)core->step();
  (void)core->step();
  core->abort("a");
  const auto got = drain(*core);
  EXPECT_EQ(got.at("a").reason, FinishReason::Abort);
  EXPECT_LT(got.at("a").token_ids.size(), static_cast<size_t>(kMax));
}

}  // namespace
}  // namespace pagoda::testing
