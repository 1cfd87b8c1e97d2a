// The logit edits a device sampler applies must do exactly what the host's logits
// processors do (tested against vLLM's semantics in logits_processors_test.cpp): the same
// bits for every token, for any mix of bad_words, min_tokens, logit_bias and penalties.
#include "sample/logit_edits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "core/error.h"

namespace pagoda {
namespace {

constexpr size_t kVocab = 300;

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Logits with the values the processors treat specially: zeros of both signs, exact
// integers, large magnitudes and -inf, mixed with normal ones.
std::vector<float> tricky_logits(std::mt19937& gen) {
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::uniform_int_distribution<int> kind(0, 9);
  std::vector<float> logits(kVocab);
  for (float& l : logits) {
    switch (kind(gen)) {
      case 0: l = 0.0f; break;
      case 1: l = -0.0f; break;
      case 2: l = static_cast<float>(static_cast<int>(normal(gen))); break;
      case 3: l = normal(gen) * 1e4f; break;
      case 4: l = -std::numeric_limits<float>::infinity(); break;
      default: l = normal(gen);
    }
  }
  return logits;
}

// A small vocabulary range, so that histories, bad words and biases collide often.
std::vector<int32_t> random_ids(std::mt19937& gen, size_t n, int32_t range) {
  std::uniform_int_distribution<int32_t> id(0, range - 1);
  std::vector<int32_t> ids(n);
  for (int32_t& t : ids) t = id(gen);
  return ids;
}

SamplingParams random_params(std::mt19937& gen, std::span<const int32_t> output) {
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const auto maybe = [&](double p) { return unit(gen) < p; };
  SamplingParams params;
  if (maybe(0.5)) params.repetition_penalty = maybe(0.5) ? 0.5f + 2.0f * unit(gen) : 1.3f;
  if (maybe(0.5)) params.frequency_penalty = 4.0f * unit(gen) - 2.0f;
  if (maybe(0.5)) params.presence_penalty = 4.0f * unit(gen) - 2.0f;
  if (maybe(0.4)) {
    for (int i = 0; i < 6; ++i) params.logit_bias[random_ids(gen, 1, 40)[0]] = 300.0f * unit(gen) - 150.0f;
  }
  if (maybe(0.4)) {
    params.min_tokens = 1 + static_cast<int>(output.size()) * (maybe(0.5) ? 2 : 0);
    params.stop_token_ids = random_ids(gen, 3, 40);
    params.eos_token_ids = random_ids(gen, 1, 40);
  }
  if (maybe(0.5)) {
    params.bad_words_token_ids.push_back(random_ids(gen, 1, 40));
    params.bad_words_token_ids.push_back(random_ids(gen, 2, 40));
    if (!output.empty()) {  // one that completes after this output
      params.bad_words_token_ids.push_back({output.back(), random_ids(gen, 1, 40)[0]});
    }
  }
  return params;
}

TEST(LogitEdits, DoWhatTheLogitsProcessorsDoBitForBit) {
  std::mt19937 gen(20261204);
  ProcessorScratch scratch;
  int rows_with_edits = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<int32_t> prompt = random_ids(gen, gen() % 30, 40);
    const std::vector<int32_t> output = random_ids(gen, gen() % 30, 40);
    const SamplingParams params = random_params(gen, output);
    const std::vector<float> logits = tricky_logits(gen);

    std::vector<float> expected = logits;
    apply_logits_processors(expected, params, prompt, output, scratch);

    std::vector<LogitEdit> edits(3);  // a previous row's edits stay untouched
    append_logit_edits(params, prompt, output, kVocab, scratch, edits);
    const std::span<const LogitEdit> row(edits.begin() + 3, edits.end());
    std::set<int32_t> tokens;
    for (const LogitEdit& e : row) ASSERT_TRUE(tokens.insert(e.token).second) << "two edits of token " << e.token;
    rows_with_edits += !row.empty();
    if (!logits_processors_act(params, output.size())) {
      EXPECT_TRUE(row.empty()) << trial;
    }

    std::vector<float> edited = logits;
    apply_logit_edits(edited, row, row_penalties(params));
    for (size_t t = 0; t < kVocab; ++t) {
      ASSERT_TRUE(same_bits(edited[t], expected[t]))
          << "trial " << trial << " token " << t << ": edits give " << edited[t] << ", the processors " << expected[t];
    }
    for (const int32_t s : scratch.edit_slots) ASSERT_EQ(s, 0);  // scratch left clean for the next row
  }
  EXPECT_GT(rows_with_edits, 1500);
}

TEST(LogitEdits, RejectTokenIdsOutsideTheVocabularyAsTheProcessorsDo) {
  ProcessorScratch scratch;
  std::vector<LogitEdit> edits;
  SamplingParams params;
  params.frequency_penalty = 1.0f;
  const std::vector<int32_t> bad_output = {1, static_cast<int32_t>(kVocab)};
  EXPECT_THROW(append_logit_edits(params, {}, bad_output, kVocab, scratch, edits), Error);
  params = SamplingParams{};
  params.logit_bias[-1] = 1.0f;
  EXPECT_THROW(append_logit_edits(params, {}, {}, kVocab, scratch, edits), Error);
  for (const int32_t s : scratch.edit_slots) ASSERT_EQ(s, 0);  // nothing half-built is left behind
}

}  // namespace
}  // namespace pagoda
