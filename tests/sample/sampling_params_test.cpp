#include "sample/sampling_params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"

namespace pagoda {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

SamplingLimits limits() {
  SamplingLimits l;
  l.vocab_size = 1000;
  l.max_tokens = 4096;
  return l;
}

TEST(SamplingParams, DefaultsAreVllms) {
  const SamplingParams p;
  EXPECT_EQ(p.n, 1);
  EXPECT_EQ(p.temperature, 1.0f);
  EXPECT_EQ(p.top_p, 1.0f);
  EXPECT_EQ(p.top_k, 0);
  EXPECT_EQ(p.min_p, 0.0f);
  EXPECT_EQ(p.repetition_penalty, 1.0f);
  EXPECT_EQ(p.max_tokens, 16);
  EXPECT_FALSE(p.logprobs.has_value());
  EXPECT_TRUE(p.skip_special_tokens);
  EXPECT_NO_THROW(p.validate(limits()));
}

TEST(SamplingParams, GoodEdgeValuesPass) {
  std::vector<std::function<void(SamplingParams&)>> good = {
      [](SamplingParams& p) { p.temperature = 0.0f; },
      [](SamplingParams& p) { p.temperature = 2.0f; },
      [](SamplingParams& p) { p.top_p = 1e-6f; },
      [](SamplingParams& p) { p.top_k = -1; },
      [](SamplingParams& p) { p.top_k = 1; },
      [](SamplingParams& p) { p.min_p = 1.0f; },
      [](SamplingParams& p) { p.presence_penalty = -2.0f; p.frequency_penalty = 2.0f; },
      [](SamplingParams& p) { p.repetition_penalty = 0.01f; },
      [](SamplingParams& p) { p.n = 128; },
      [](SamplingParams& p) { p.logprobs = 20; p.prompt_logprobs = 0; },
      [](SamplingParams& p) { p.max_tokens.reset(); p.min_tokens = 100000; },
      [](SamplingParams& p) { p.min_tokens = 16; },
      [](SamplingParams& p) { p.stop = std::vector<std::string>(64, "x"); },
      [](SamplingParams& p) { p.stop = {std::string(1024, 'x')}; },
      [](SamplingParams& p) { p.logit_bias = {{0, -1e9f}, {999, 1e9f}}; },  // clamped later
      [](SamplingParams& p) { p.allowed_token_ids = std::vector<int32_t>{0, 999}; },
      [](SamplingParams& p) { p.stop_token_ids = {999}; },
  };
  for (size_t i = 0; i < good.size(); ++i) {
    SamplingParams p;
    good[i](p);
    EXPECT_NO_THROW(p.validate(limits())) << "good case " << i;
  }
}

struct BadCase {
  std::function<void(SamplingParams&)> set;
  std::string message;  // a fragment the Error must contain
};

TEST(SamplingParams, EveryBadValueIsAnErrorNamingIt) {
  const std::vector<BadCase> bad = {
      {[](SamplingParams& p) { p.n = 0; }, "n must be at least 1"},
      {[](SamplingParams& p) { p.n = 129; }, "n must be at most 128"},
      {[](SamplingParams& p) { p.n = 2; p.temperature = 0.0f; }, "n must be 1 when using greedy"},
      {[](SamplingParams& p) { p.presence_penalty = 2.5f; }, "presence_penalty must be in [-2, 2]"},
      {[](SamplingParams& p) { p.presence_penalty = kNaN; }, "presence_penalty"},
      {[](SamplingParams& p) { p.frequency_penalty = -2.01f; }, "frequency_penalty must be in"},
      {[](SamplingParams& p) { p.frequency_penalty = kNaN; }, "frequency_penalty"},
      {[](SamplingParams& p) { p.repetition_penalty = 0.0f; }, "repetition_penalty must be greater"},
      {[](SamplingParams& p) { p.repetition_penalty = -1.0f; }, "repetition_penalty"},
      {[](SamplingParams& p) { p.repetition_penalty = kInf; }, "repetition_penalty must be a finite"},
      {[](SamplingParams& p) { p.temperature = -0.1f; }, "temperature must be non-negative"},
      {[](SamplingParams& p) { p.temperature = 2.5f; }, "temperature must be in [0, 2]"},
      {[](SamplingParams& p) { p.temperature = kNaN; }, "temperature must be a finite"},
      {[](SamplingParams& p) { p.top_p = 0.0f; }, "top_p must be in (0, 1]"},
      {[](SamplingParams& p) { p.top_p = 1.01f; }, "top_p must be in (0, 1]"},
      {[](SamplingParams& p) { p.top_p = kNaN; }, "top_p"},
      {[](SamplingParams& p) { p.top_k = -2; }, "top_k must be 0 (disable), or at least 1"},
      {[](SamplingParams& p) { p.min_p = -0.01f; }, "min_p must be in [0, 1]"},
      {[](SamplingParams& p) { p.min_p = 1.5f; }, "min_p must be in [0, 1]"},
      {[](SamplingParams& p) { p.min_p = kNaN; }, "min_p"},
      {[](SamplingParams& p) { p.max_tokens = 0; }, "max_tokens must be at least 1"},
      {[](SamplingParams& p) { p.max_tokens = 5000; }, "max_tokens must be at most 4096"},
      {[](SamplingParams& p) { p.min_tokens = -1; }, "min_tokens must be greater than or equal"},
      {[](SamplingParams& p) { p.min_tokens = 17; }, "min_tokens must be less than or equal to max_tokens=16"},
      {[](SamplingParams& p) { p.logprobs = 21; }, "logprobs (21) exceeds the maximum allowed value of 20"},
      {[](SamplingParams& p) { p.logprobs = -2; }, "logprobs must be non-negative or -1"},
      {[](SamplingParams& p) { p.logprobs = -1; }, "logprobs (1000) exceeds"},  // whole vocab
      {[](SamplingParams& p) { p.prompt_logprobs = 21; }, "prompt_logprobs (21) exceeds"},
      {[](SamplingParams& p) { p.prompt_logprobs = -3; }, "prompt_logprobs must be non-negative"},
      {[](SamplingParams& p) { p.stop = std::vector<std::string>(65, "x"); }, "at most 64 strings"},
      {[](SamplingParams& p) { p.stop = {std::string(1025, 'x')}; }, "at most 1024 bytes"},
      {[](SamplingParams& p) { p.stop = {"ok", ""}; }, "stop cannot contain an empty string"},
      {[](SamplingParams& p) { p.stop_token_ids = {1000}; }, "stop_token_ids contains out-of-vocab token id 1000"},
      {[](SamplingParams& p) { p.stop_token_ids = {-1}; }, "stop_token_ids contains out-of-vocab"},
      {[](SamplingParams& p) { p.stop_token_ids = std::vector<int32_t>(1025, 1); }, "stop_token_ids must contain at most"},
      {[](SamplingParams& p) { p.eos_token_ids = {5000}; }, "eos_token_ids contains out-of-vocab"},
      {[](SamplingParams& p) { p.logit_bias = {{1000, 1.0f}}; }, "logit_bias contains out-of-vocab token id 1000"},
      {[](SamplingParams& p) { p.logit_bias = {{3, kNaN}}; }, "logit_bias for token 3 is not a number"},
      {[](SamplingParams& p) { for (int32_t i = 0; i < 1025; ++i) p.logit_bias[i] = 1.0f; },
       "logit_bias must contain at most 1024"},
      {[](SamplingParams& p) { p.allowed_token_ids = std::vector<int32_t>{}; }, "allowed_token_ids is not allowed to be empty"},
      {[](SamplingParams& p) { p.allowed_token_ids = std::vector<int32_t>{1, 1000}; }, "allowed_token_ids contains out-of-vocab token id 1000"},
      {[](SamplingParams& p) { p.allowed_token_ids = std::vector<int32_t>(1001, 1); }, "more than the vocabulary size"},
      {[](SamplingParams& p) { p.bad_words = {""}; }, "bad_words cannot contain an empty string"},
      {[](SamplingParams& p) { p.bad_words = std::vector<std::string>(129, "w"); }, "Too many bad words: 129"},
      {[](SamplingParams& p) { p.bad_words_token_ids = {{1, 1000}}; }, "bad_words contains out-of-vocab token id 1000"},
      {[](SamplingParams& p) { p.bad_words_token_ids = {{}}; }, "must tokenize to at least one token"},
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    SamplingParams p;
    bad[i].set(p);
    try {
      p.validate(limits());
      ADD_FAILURE() << "bad case " << i << " passed validation (expected: " << bad[i].message << ")";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad[i].message), std::string::npos)
          << "bad case " << i << ": got \"" << e.what() << "\", want \"" << bad[i].message << "\"";
    }
  }
}

TEST(SamplingParams, LimitsWithoutVocabAreAnError) {
  EXPECT_THROW(SamplingParams{}.validate(SamplingLimits{}), Error);
}

TEST(SamplingParams, UncappedLogprobsAllowTheWholeVocabulary) {
  SamplingLimits l = limits();
  l.max_logprobs = -1;
  SamplingParams p;
  p.logprobs = -1;
  EXPECT_NO_THROW(p.validate(l));
}

TEST(SamplingParams, EffectiveTemperatureAndGreedy) {
  SamplingParams p;
  p.temperature = 0.0f;
  EXPECT_TRUE(p.is_greedy());
  p.temperature = 1e-6f;
  EXPECT_TRUE(p.is_greedy());
  p.temperature = 1e-3f;
  EXPECT_FALSE(p.is_greedy());
  EXPECT_EQ(p.effective_temperature(), kMinTemperature);
  p.temperature = 0.7f;
  EXPECT_EQ(p.effective_temperature(), 0.7f);
}

// A toy tokenizer: each char is a token (its byte value), except that " ab" and "ab" are
// single tokens, like a BPE that folds a leading space into the word.
std::vector<int32_t> toy_encode(std::string_view text) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i, 3) == " ab") { ids.push_back(300); i += 3; continue; }
    if (text.substr(i, 2) == "ab") { ids.push_back(301); i += 2; continue; }
    ids.push_back(static_cast<unsigned char>(text[i]));
    ++i;
  }
  return ids;
}

TEST(SamplingParams, TokenizeBadWordsFollowsVllm) {
  SamplingParams p;
  p.bad_words = {"ab", "  xy"};
  p.tokenize_bad_words(toy_encode, limits());
  // "ab" -> [301]; " ab" -> [300]: same length, different first token, kept too.
  // "xy" (stripped) -> [x, y]; " xy" -> [' ', x, y]: longer, dropped.
  const std::vector<std::vector<int32_t>> want = {{301}, {300}, {'x', 'y'}};
  EXPECT_EQ(p.bad_words_token_ids, want);
  EXPECT_NO_THROW(p.validate(limits()));

  SamplingParams blank;
  blank.bad_words = {"   "};
  EXPECT_THROW(blank.tokenize_bad_words(toy_encode, limits()), Error);

  SamplingLimits small = limits();
  small.vocab_size = 200;  // token 301 is out of this vocabulary
  SamplingParams out_of_vocab;
  out_of_vocab.bad_words = {"ab"};
  EXPECT_THROW(out_of_vocab.tokenize_bad_words(toy_encode, small), Error);

  SamplingLimits few = limits();
  few.max_bad_words = 2;
  SamplingParams many;
  many.bad_words = {"ab", "q"};
  EXPECT_THROW(many.tokenize_bad_words(toy_encode, few), Error);
}

}  // namespace
}  // namespace pagoda
