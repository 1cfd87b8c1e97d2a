#include "sample/logits_processors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/error.h"

namespace pagoda {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::vector<float> random_logits(size_t vocab, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(vocab);
  for (float& l : logits) l = normal(gen);
  return logits;
}

TEST(LogitsProcessors, AllowedTokenIdsMaskEverythingElse) {
  std::vector<float> logits = random_logits(20, 1);
  const std::vector<float> before = logits;
  SamplingParams params;
  params.allowed_token_ids = std::vector<int32_t>{3, 7, 7, 19};
  ProcessorScratch scratch;
  apply_logits_processors(logits, params, {}, {}, scratch);
  for (size_t i = 0; i < logits.size(); ++i) {
    const bool allowed = i == 3 || i == 7 || i == 19;
    EXPECT_EQ(logits[i], allowed ? before[i] : kNegInf) << i;
  }
  for (uint8_t m : scratch.marks) ASSERT_EQ(m, 0);  // scratch left clean for the next row
}

TEST(LogitsProcessors, BadWordsBanTheCompletingTokenOnly) {
  SamplingParams params;
  params.bad_words_token_ids = {{5}, {1, 2, 3}, {9, 4}};
  ProcessorScratch scratch;
  const std::vector<int32_t> prompt = {9};  // bad-word prefixes in the prompt do not count
  auto run = [&](std::vector<int32_t> output) {
    std::vector<float> logits(10, 1.0f);
    apply_logits_processors(logits, params, prompt, output, scratch);
    std::vector<int32_t> banned;
    for (int32_t i = 0; i < 10; ++i) {
      if (logits[i] == kNegInf) banned.push_back(i);
    }
    return banned;
  };
  EXPECT_EQ(run({}), std::vector<int32_t>({5}));
  EXPECT_EQ(run({1, 2}), std::vector<int32_t>({3, 5}));
  EXPECT_EQ(run({0, 1, 2}), std::vector<int32_t>({3, 5}));
  EXPECT_EQ(run({1, 2, 0}), std::vector<int32_t>({5}));
  EXPECT_EQ(run({2}), std::vector<int32_t>({5}));  // only part of the prefix
  EXPECT_EQ(run({9}), std::vector<int32_t>({4, 5}));
}

TEST(LogitsProcessors, MinTokensMasksStopAndEosUntilReached) {
  SamplingParams params;
  params.min_tokens = 3;
  params.stop_token_ids = {4};
  params.eos_token_ids = {2};
  params.ignore_eos = true;  // vLLM masks EOS for min_tokens even then
  ProcessorScratch scratch;
  for (size_t produced = 0; produced <= 4; ++produced) {
    std::vector<float> logits(6, 0.5f);
    const std::vector<int32_t> output(produced, 1);
    apply_logits_processors(logits, params, {}, output, scratch);
    const bool masked = produced < 3;
    EXPECT_EQ(logits[2] == kNegInf, masked) << produced;
    EXPECT_EQ(logits[4] == kNegInf, masked) << produced;
    EXPECT_EQ(logits[1], 0.5f);
  }
}

TEST(LogitsProcessors, LogitBiasIsAddedAndClamped) {
  std::vector<float> logits = {1.0f, 2.0f, 3.0f, 4.0f};
  SamplingParams params;
  params.logit_bias = {{0, 5.0f}, {1, -1000.0f}, {3, std::numeric_limits<float>::infinity()}};
  ProcessorScratch scratch;
  apply_logits_processors(logits, params, {}, {}, scratch);
  EXPECT_EQ(logits, (std::vector<float>{6.0f, -98.0f, 3.0f, 104.0f}));
}

TEST(LogitsProcessors, PenaltiesMatchDirectFormula) {
  // vLLM: repetition over the prompt and the output (once per distinct token), then
  // frequency * count and presence over the output only.
  ProcessorScratch scratch;
  std::mt19937 gen(5);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t vocab = 40;
    const std::vector<float> raw = random_logits(vocab, 100 + trial);
    SamplingParams params;
    params.repetition_penalty = std::uniform_real_distribution<float>(0.5f, 2.0f)(gen);
    params.frequency_penalty = std::uniform_real_distribution<float>(-2.0f, 2.0f)(gen);
    params.presence_penalty = std::uniform_real_distribution<float>(-2.0f, 2.0f)(gen);
    std::uniform_int_distribution<int32_t> token(0, vocab - 1);
    std::vector<int32_t> prompt(std::uniform_int_distribution<int>(0, 15)(gen));
    std::vector<int32_t> output(std::uniform_int_distribution<int>(0, 15)(gen));
    for (int32_t& t : prompt) t = token(gen);
    for (int32_t& t : output) t = token(gen);

    std::vector<float> ours = raw;
    apply_logits_processors(ours, params, prompt, output, scratch);
    for (size_t v = 0; v < vocab; ++v) {
      const auto id = static_cast<int32_t>(v);
      int count_out = 0;
      bool in_prompt = false;
      for (int32_t t : output) count_out += t == id;
      for (int32_t t : prompt) in_prompt |= t == id;
      float want = raw[v];
      if (in_prompt || count_out > 0) {
        want = want > 0 ? want / params.repetition_penalty : want * params.repetition_penalty;
      }
      want -= params.frequency_penalty * static_cast<float>(count_out);
      if (count_out > 0) want -= params.presence_penalty;
      ASSERT_EQ(ours[v], want) << "trial " << trial << " token " << v;
    }
    for (int32_t c : scratch.counts) ASSERT_EQ(c, 0);
    for (uint8_t m : scratch.marks) ASSERT_EQ(m, 0);
  }
}

TEST(LogitsProcessors, OutOfVocabHistoryIsAnErrorNotACrash) {
  SamplingParams params;
  params.repetition_penalty = 1.2f;
  ProcessorScratch scratch;
  std::vector<float> logits(8, 0.0f);
  const std::vector<int32_t> bad = {3, 8};
  EXPECT_THROW(apply_logits_processors(logits, params, bad, {}, scratch), Error);
  const std::vector<int32_t> negative = {-1};
  EXPECT_THROW(apply_logits_processors(logits, params, {}, negative, scratch), Error);
  SamplingParams bias;
  bias.logit_bias = {{8, 1.0f}};
  EXPECT_THROW(apply_logits_processors(logits, bias, {}, {}, scratch), Error);
}

}  // namespace
}  // namespace pagoda
