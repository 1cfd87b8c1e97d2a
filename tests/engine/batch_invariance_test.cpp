// Batch invariance: a request's output alone equals its output in a batch of others, at a
// random position, with chunked prefill and prefix-cache hits in play. Greedy and seeded.
#include <algorithm>

#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

// The batch runs with async scheduling or without (the parameter); the needles alone without.
class EngineBatchInvariance : public ::testing::TestWithParam<bool> {};

TEST_P(EngineBatchInvariance, NeedleAloneEqualsNeedleInBatch) {
  PAGODA_NEED_SMOLLM2(b);
  const int num_requests = skip_slow() ? 6 : 32;
  const int max_tokens = skip_slow() ? 4 : 8;
  std::mt19937 rng(2024);
  EngineOptions o = small_options();
  o.max_num_batched_tokens = 48;  // forces chunked prefills beside decodes
  o.max_num_seqs = 64;

  const std::vector<int32_t> greedy_prompt = random_prompt(rng, 37);
  const std::vector<int32_t> sampled_prompt = random_prompt(rng, 29);
  SamplingParams sampled;
  sampled.temperature = 0.9f;
  sampled.top_p = 0.95f;
  sampled.seed = 1234;
  sampled.max_tokens = max_tokens;
  sampled.ignore_eos = true;

  const Collected greedy_alone = run_alone(*b, o, greedy_prompt, greedy(max_tokens));
  const Collected sampled_alone = run_alone(*b, o, sampled_prompt, sampled);
  ASSERT_EQ(greedy_alone.token_ids.size(), static_cast<size_t>(max_tokens));

  // The others: random lengths; every third shares the needle's first two blocks, and one
  // of those goes first so that the needle finds its prefix cached.
  EngineOptions batch_options = o;
  batch_options.async_scheduling = GetParam();
  auto core = make_core(*b, batch_options);
  std::vector<std::pair<RequestId, std::vector<int32_t>>> others;
  for (int i = 0; i < num_requests - 2; ++i) {
    std::vector<int32_t> p = random_prompt(rng, std::uniform_int_distribution<int>(5, 40)(rng));
    if (i % 3 == 0) {
      p.insert(p.begin(), greedy_prompt.begin(), greedy_prompt.begin() + 32);
    }
    others.emplace_back(std::string("o") + std::to_string(i), std::move(p));
  }
  SamplingParams other_sampled = sampled;
  other_sampled.seed = 99;
  const size_t first_wave = others.size() / 2;
  for (size_t i = 0; i < first_wave; ++i) {
    core->add_request(others[i].first, others[i].second, i % 2 ? greedy(max_tokens) : other_sampled);
  }
  std::map<RequestId, Collected> acc;
  for (int s = 0; s < 3; ++s) {
    for (const RequestOutput& d : core->step()) acc[d.id].token_ids.insert(acc[d.id].token_ids.end(), d.token_ids.begin(), d.token_ids.end());
  }
  // The second wave, with both needles at random positions in it.
  std::vector<std::pair<RequestId, std::vector<int32_t>>> wave(others.begin() + static_cast<long>(first_wave), others.end());
  wave.insert(wave.begin() + std::uniform_int_distribution<long>(0, static_cast<long>(wave.size()))(rng), {"greedy", greedy_prompt});
  wave.insert(wave.begin() + std::uniform_int_distribution<long>(0, static_cast<long>(wave.size()))(rng), {"sampled", sampled_prompt});
  for (size_t i = 0; i < wave.size(); ++i) {
    const SamplingParams p = wave[i].first == "sampled" ? sampled : (i % 2 || wave[i].first == "greedy") ? greedy(max_tokens) : SamplingParams{};
    SamplingParams q = p;
    q.max_tokens = max_tokens;
    q.ignore_eos = true;
    core->add_request(wave[i].first, wave[i].second, q);
  }
  const int64_t hits_before = core->scheduler().stats().prefix_cache.hits;
  acc = drain(*core, acc);
  EXPECT_GE(core->scheduler().stats().prefix_cache.hits - hits_before, 32) << "the needle's prefix was not cached";
  EXPECT_EQ(acc["greedy"].token_ids, greedy_alone.token_ids);
  EXPECT_EQ(acc["greedy"].text, greedy_alone.text);
  EXPECT_EQ(acc["sampled"].token_ids, sampled_alone.token_ids);
  EXPECT_EQ(acc.size(), static_cast<size_t>(num_requests));
}

INSTANTIATE_TEST_SUITE_P(Scheduling, EngineBatchInvariance, ::testing::Bool(), scheduling_name);

}  // namespace
}  // namespace pagoda::testing
