// Logprobs computed by the device sampler against the host Sampler's, in the engine: the same
// greedy request, alone on a fresh core each time, once as the device takes it and once with
// allowed_token_ids naming the whole vocabulary (a processor that is not a logit edit, and
// that removes nothing: the runner sends that row to the host Sampler). Both runs compute the
// same logits, so tokens, top ids and ranks must agree and logprobs within float rounding.
// Needs a backend with a device sampler: it runs on the device machine
// (PAGODA_TEST_DEVICE=cuda) and is skipped on the CPU, where both runs would be the host's.
#include <cmath>
#include <numeric>

#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

std::vector<TokenLogprobs> logprobs_alone(ModelBundle& b, const std::vector<int32_t>& prompt, const SamplingParams& p) {
  auto core = make_core(b, small_options());
  core->add_request("alone", prompt, p);
  std::vector<TokenLogprobs> out;
  while (core->has_unfinished_requests()) {
    for (RequestOutput& d : core->step()) {
      EXPECT_EQ(d.logprobs.size(), d.token_ids.size());
      out.insert(out.end(), d.logprobs.begin(), d.logprobs.end());
    }
  }
  return out;
}

TEST(DeviceLogprobs, AreTheHostSamplersForTheSameLogits) {
  PAGODA_NEED_SMOLLM2(b);
  if (!b->backend().can_sample()) GTEST_SKIP() << "backend " << b->backend().name() << " has no device sampler";
  std::mt19937 rng(31);
  for (const int num_top : {0, 5, 20}) {
    SamplingParams p = greedy(12);
    p.logprobs = num_top;
    p.repetition_penalty = 1.3f;  // a logit edit: the logprobs must be of the logits before it
    SamplingParams host = p;
    host.allowed_token_ids.emplace(static_cast<size_t>(b->model().spec().vocab_size));
    std::iota(host.allowed_token_ids->begin(), host.allowed_token_ids->end(), 0);
    const std::vector<int32_t> prompt = random_prompt(rng, 40);
    const std::vector<TokenLogprobs> got = logprobs_alone(*b, prompt, p);
    const std::vector<TokenLogprobs> want = logprobs_alone(*b, prompt, host);
    ASSERT_EQ(got.size(), 12u);
    ASSERT_EQ(want.size(), got.size());
    for (size_t t = 0; t < got.size(); ++t) {
      SCOPED_TRACE("top " + std::to_string(num_top) + ", token " + std::to_string(t));
      ASSERT_EQ(got[t].sampled.token, want[t].sampled.token);
      EXPECT_NEAR(got[t].sampled.logprob, want[t].sampled.logprob, 1e-5);
      EXPECT_EQ(got[t].sampled.rank, want[t].sampled.rank);
      ASSERT_EQ(got[t].top.size(), want[t].top.size());
      for (size_t i = 0; i < got[t].top.size(); ++i) {
        EXPECT_EQ(got[t].top[i].token, want[t].top[i].token) << "top " << i;
        EXPECT_NEAR(got[t].top[i].logprob, want[t].top[i].logprob, 1e-5) << "top " << i;
        EXPECT_EQ(got[t].top[i].rank, want[t].top[i].rank);
      }
    }
  }
}

}  // namespace
}  // namespace pagoda::testing
