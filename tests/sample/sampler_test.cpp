#include "sample/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "core/error.h"

namespace pagoda {
namespace {

constexpr size_t kVocab = 64;

// The model's logits for a request at a step: a pure function of (request, step).
std::vector<float> model_logits(uint32_t request, size_t step) {
  std::mt19937 gen(request * 7919u + static_cast<uint32_t>(step));
  std::normal_distribution<float> normal(0.0f, 1.5f);
  std::vector<float> logits(kVocab);
  for (float& l : logits) l = normal(gen);
  return logits;
}

struct Request {
  uint32_t id;
  SamplingParams params;
  std::vector<int32_t> prompt;
  std::vector<int32_t> output;
  Rng rng;
};

Request make_request(uint32_t id, std::optional<int64_t> seed) {
  Request r{id, {}, {1, 2, 3, static_cast<int32_t>(id % kVocab)}, {}, Rng(seed)};
  r.params.seed = seed;
  r.params.temperature = 0.9f;
  r.params.top_p = 0.95f;
  r.params.top_k = 40;
  r.params.repetition_penalty = 1.1f;
  r.params.frequency_penalty = 0.3f;
  return r;
}

// Runs the batch for `steps` steps; requests are sampled in the order given.
void run_batch(std::vector<Request*> batch, size_t steps, Sampler& sampler) {
  for (size_t step = 0; step < steps; ++step) {
    std::vector<std::vector<float>> logits;
    for (Request* r : batch) logits.push_back(model_logits(r->id, r->output.size()));
    std::vector<SamplerRow> rows;
    for (size_t i = 0; i < batch.size(); ++i) {
      Request& r = *batch[i];
      rows.push_back({logits[i], &r.params, r.prompt, r.output, &r.rng});
    }
    const std::vector<SampleResult> results = sampler.sample(rows);
    for (size_t i = 0; i < batch.size(); ++i) batch[i]->output.push_back(results[i].token);
  }
}

TEST(Sampler, SeededOutputIndependentOfBatchCompositionAndPosition) {
  Sampler alone_sampler;
  Request alone = make_request(1, 42);
  run_batch({&alone}, 30, alone_sampler);

  Sampler batch_sampler;
  Request seeded = make_request(1, 42);
  Request other_seeded = make_request(2, 42);  // same seed, different prompt/logits
  Request unseeded_a = make_request(3, std::nullopt);
  Request unseeded_b = make_request(4, std::nullopt);
  run_batch({&unseeded_a, &other_seeded, &seeded}, 10, batch_sampler);
  run_batch({&seeded, &unseeded_b}, 10, batch_sampler);  // moves to row 0, new neighbours
  run_batch({&unseeded_b, &unseeded_a, &seeded, &other_seeded}, 10, batch_sampler);
  EXPECT_EQ(seeded.output, alone.output);
  EXPECT_NE(other_seeded.output, alone.output);
}

TEST(Sampler, DifferentSeedsGiveDifferentStreams) {
  Sampler sampler;
  Request a = make_request(1, 1);
  Request b = make_request(1, 2);
  run_batch({&a, &b}, 30, sampler);
  EXPECT_NE(a.output, b.output);
}

TEST(Sampler, RngStateResumesAStream) {
  // Preemption by recompute: saving (key, counter) and resuming gives the same tokens.
  Sampler sampler;
  Request full = make_request(9, 123);
  run_batch({&full}, 20, sampler);
  Request resumed = make_request(9, 123);
  run_batch({&resumed}, 8, sampler);
  resumed.rng = Rng::from_state(resumed.rng.key(), resumed.rng.counter());
  run_batch({&resumed}, 12, sampler);
  EXPECT_EQ(resumed.output, full.output);
}

TEST(Sampler, UnseededRequestsDiffer) {
  Sampler sampler;
  Request a = make_request(1, std::nullopt);
  Request b = make_request(1, std::nullopt);
  run_batch({&a, &b}, 30, sampler);
  EXPECT_NE(a.output, b.output);
}

TEST(Sampler, GreedyIsArgmaxOfProcessedLogitsAndDrawsNothing) {
  Sampler sampler;
  Rng rng(1);
  for (float temperature : {0.0f, 1e-6f}) {
    SamplingParams params;
    params.temperature = temperature;
    params.top_k = 2;  // ignored when greedy, as in vLLM
    params.logit_bias = {{5, 3.0f}};
    std::vector<float> logits = {0.0f, 2.5f, 1.0f, 2.5f, -1.0f, 0.0f};
    // Token 5 gets 0 + 3 = 3: the argmax after the bias.
    EXPECT_EQ(sampler.sample({logits, &params, {}, {}, &rng}).token, 5);
    std::vector<float> tied = {0.0f, 2.5f, 1.0f, 2.5f};
    params.logit_bias.clear();
    EXPECT_EQ(sampler.sample({tied, &params, {}, {}, &rng}).token, 1);  // lowest id of a tie
  }
  EXPECT_EQ(rng.counter(), 0u);
}

TEST(Sampler, SmallTemperatureIsRaisedToTheMinimum) {
  // With temperature 1e-4 raised to kMinTemperature (0.01), logits {0, -0.01 ln 3} become
  // {0, -ln 3}: probabilities 3/4 and 1/4. Dividing by 1e-4 would make token 1 vanish.
  Sampler sampler;
  Rng rng(1);
  SamplingParams params;
  params.temperature = 1e-4f;
  int ones = 0;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    std::vector<float> row = {0.0f, -0.01f * std::log(3.0f)};
    ones += sampler.sample({row, &params, {}, {}, &rng}).token;
  }
  EXPECT_NEAR(ones / static_cast<double>(kDraws), 0.25, 0.015);  // ~5 sigma
}

TEST(Sampler, NaNAndMaskedLogitsNeverDrawn) {
  Sampler sampler;
  Rng rng(3);
  SamplingParams params;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (int i = 0; i < 200; ++i) {
    std::vector<float> logits = {nan, 0.0f, -inf, 0.5f, nan};
    const int32_t token = sampler.sample({logits, &params, {}, {}, &rng}).token;
    EXPECT_TRUE(token == 1 || token == 3) << token;
  }
  std::vector<float> plus_inf = {0.0f, inf, 3.0f, inf};
  std::set<int32_t> seen;
  for (int i = 0; i < 100; ++i) {
    std::vector<float> row = plus_inf;
    seen.insert(sampler.sample({row, &params, {}, {}, &rng}).token);
  }
  EXPECT_EQ(seen, (std::set<int32_t>{1, 3}));
}

TEST(Sampler, NothingLeftIsAnError) {
  Sampler sampler;
  Rng rng(3);
  SamplingParams params;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> logits = {nan, -std::numeric_limits<float>::infinity()};
  EXPECT_THROW((void)sampler.sample({logits, &params, {}, {}, &rng}), Error);
  params.temperature = 0.0f;
  EXPECT_THROW((void)sampler.sample({logits, &params, {}, {}, &rng}), Error);
  SamplingParams random;
  std::vector<float> ok = {0.0f, 1.0f};
  EXPECT_THROW((void)sampler.sample({ok, &random, {}, {}, nullptr}), Error);  // no Rng
  EXPECT_THROW((void)sampler.sample({ok, nullptr, {}, {}, &rng}), Error);     // no params
}

TEST(Sampler, AllowedTokenIdsRestrictTheDraw) {
  Sampler sampler;
  Rng rng(8);
  SamplingParams params;
  params.allowed_token_ids = std::vector<int32_t>{10, 20, 30};
  for (size_t step = 0; step < 100; ++step) {
    std::vector<float> logits = model_logits(5, step);
    const int32_t token = sampler.sample({logits, &params, {}, {}, &rng}).token;
    EXPECT_TRUE(token == 10 || token == 20 || token == 30) << token;
  }
}

TEST(Sampler, RandomValidParamsAndHostileLogitsNeverCrash) {
  // Any params that pass validate(), over logits sprinkled with NaN and +-inf, give a token
  // whose processed logit is a number above -inf, or an Error when nothing is left.
  std::mt19937 gen(77);
  auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen); };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(gen); };
  SamplingLimits limits;
  limits.vocab_size = 50;
  Sampler sampler(LogprobsMode::kProcessed);
  Sampler raw_sampler;
  int sampled = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    SamplingParams p;
    p.temperature = chance(0.2) ? 0.0f : uniform(0.0f, 2.0f);
    p.top_p = chance(0.5) ? 1.0f : uniform(0.001f, 1.0f);
    p.top_k = std::uniform_int_distribution<int32_t>(-1, 60)(gen);
    p.min_p = chance(0.5) ? 0.0f : uniform(0.0f, 1.0f);
    p.repetition_penalty = chance(0.5) ? 1.0f : uniform(0.05f, 3.0f);
    p.presence_penalty = uniform(-2.0f, 2.0f);
    p.frequency_penalty = uniform(-2.0f, 2.0f);
    p.min_tokens = std::uniform_int_distribution<int>(0, 5)(gen);
    p.logprobs = std::uniform_int_distribution<int>(-1, 20)(gen);
    p.stop_token_ids = {static_cast<int32_t>(gen() % 50)};
    p.eos_token_ids = {static_cast<int32_t>(gen() % 50)};
    if (chance(0.3)) p.logit_bias[static_cast<int32_t>(gen() % 50)] = uniform(-1e4f, 1e4f);
    if (chance(0.2)) p.allowed_token_ids = std::vector<int32_t>{static_cast<int32_t>(gen() % 50)};
    if (chance(0.3)) p.bad_words_token_ids = {{static_cast<int32_t>(gen() % 50)}, {1, 2}};
    SamplingLimits relaxed = limits;
    relaxed.max_logprobs = -1;
    ASSERT_NO_THROW(p.validate(relaxed)) << trial;

    std::vector<float> logits(50);
    for (float& l : logits) {
      const double r = std::uniform_real_distribution<double>(0, 1)(gen);
      l = r < 0.05   ? std::numeric_limits<float>::quiet_NaN()
          : r < 0.1  ? -std::numeric_limits<float>::infinity()
          : r < 0.12 ? std::numeric_limits<float>::infinity()
                     : uniform(-30.0f, 30.0f);
    }
    std::vector<int32_t> prompt(gen() % 10), output(gen() % 10);
    for (int32_t& t : prompt) t = static_cast<int32_t>(gen() % 50);
    for (int32_t& t : output) t = static_cast<int32_t>(gen() % 50);
    Rng rng(trial);
    Sampler& s = trial % 2 ? sampler : raw_sampler;
    try {
      const SampleResult r = s.sample({logits, &p, prompt, output, &rng});
      ASSERT_GE(r.token, 0);
      ASSERT_LT(r.token, 50);
      ASSERT_TRUE(logits[r.token] > -std::numeric_limits<float>::infinity()) << trial;
      ASSERT_TRUE(r.logprobs.has_value());
      ++sampled;
    } catch (const Error&) {
      // Only when every token ended up masked or NaN.
      ASSERT_TRUE(std::none_of(logits.begin(), logits.end(), [](float l) {
        return l > -std::numeric_limits<float>::infinity();
      })) << trial;
    }
  }
  EXPECT_GT(sampled, 2500);
}

}  // namespace
}  // namespace pagoda
