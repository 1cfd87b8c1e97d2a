// The device sampler (Backend::sample) against the host Sampler's filters. The reference
// survivors and probabilities are filter_candidates'; the reference draw is an inverse-CDF
// walk over them in token-id order. Each row is probed at the middle of survivors' CDF
// intervals: a token's interval is where the device must answer that token, so probing
// every survivor of a small set pins the whole set and the whole distribution, and probing
// a sample of a large set pins those intervals. The logits processors reach the device as
// logit edits (sample/logit_edits.h), checked against the host processors bit for bit.
// Skipped where no GPU is visible (CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "cuda_test_util.h"
#include "sample/filters.h"
#include "sample/logit_edits.h"
#include "sample/logprobs.h"

namespace pagoda {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Survivors in id order with their interval [start, start + prob) of the unit CDF.
struct Interval {
  int32_t id;
  double start, prob;
};

std::vector<Interval> reference_intervals(const std::vector<float>& logits, const SamplingParams& params) {
  Candidates c;
  filter_candidates(logits, params, c);
  std::vector<Interval> out;
  for (size_t i = 0; i < c.ids.size(); ++i) out.push_back({c.ids[i], 0.0, c.probs[i]});
  std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) { return a.id < b.id; });
  double cumulative = 0.0;
  for (Interval& iv : out) {
    iv.start = cumulative;
    cumulative += iv.prob;
  }
  return out;
}

struct Case {
  std::vector<float> logits;
  SamplingParams params;
};

// Rows with peaked and flat distributions, ties (values on a coarse grid) and masked tokens.
std::vector<float> random_row(std::mt19937& rng, int64_t vocab, int kind) {
  std::normal_distribution<float> normal(0.0f, kind == 0 ? 1.0f : 4.0f);
  std::vector<float> row(static_cast<size_t>(vocab));
  for (float& x : row) x = normal(rng);
  if (kind == 2) {
    for (float& x : row) x = std::round(x * 2.0f) / 2.0f;  // many exact ties
  }
  if (kind == 3) {
    std::uniform_int_distribution<int64_t> pick(0, vocab - 1);
    for (int i = 0; i < vocab / 3; ++i) row[static_cast<size_t>(pick(rng))] = -kInf;
  }
  return row;
}

Tensor upload_rows(Backend& gpu, const std::vector<Case>& cases, int64_t vocab) {
  std::vector<float> all;
  for (const Case& c : cases) all.insert(all.end(), c.logits.begin(), c.logits.end());
  Tensor logits = gpu.alloc(DType::F32, {static_cast<int64_t>(cases.size()), vocab});
  gpu.copy_from_host(all.data(), logits);
  return logits;
}

// Probes the device sampler on logits (row r holding cases[r].logits) against the reference.
void probe_rows(Backend& gpu, const Tensor& logits, const std::vector<Case>& cases, std::mt19937& rng) {
  std::vector<SampleRowSpec> specs;
  std::vector<int32_t> expected;
  std::vector<size_t> case_of;
  for (size_t r = 0; r < cases.size(); ++r) {
    const SamplingParams& p = cases[r].params;
    SampleRowSpec spec;
    spec.logit_row = static_cast<int32_t>(r);
    if (p.is_greedy()) {
      spec.greedy = 1;
      specs.push_back(spec);
      expected.push_back(argmax_token(cases[r].logits));
      case_of.push_back(r);
      continue;
    }
    spec.temperature = p.effective_temperature();
    spec.top_k = p.top_k;
    spec.top_p = p.top_p;
    spec.min_p = p.min_p;
    const std::vector<Interval> intervals = reference_intervals(cases[r].logits, p);
    std::vector<size_t> probes;
    if (intervals.size() <= 64) {
      for (size_t i = 0; i < intervals.size(); ++i) probes.push_back(i);
    } else {
      std::uniform_int_distribution<size_t> pick(0, intervals.size() - 1);
      probes = {0, intervals.size() - 1};
      for (int i = 0; i < 30; ++i) probes.push_back(pick(rng));
    }
    for (const size_t i : probes) {
      // An interval within float rounding of the total (each weight is a float exp) would
      // probe rounding, not the sampler.
      if (intervals[i].prob < 1e-6) continue;
      spec.uniform = intervals[i].start + intervals[i].prob / 2;
      specs.push_back(spec);
      expected.push_back(intervals[i].id);
      case_of.push_back(r);
    }
  }
  std::vector<int32_t> ids(specs.size(), -7);
  gpu.sample(logits, specs, {}, ids.data());
  int mismatches = 0;
  for (size_t j = 0; j < specs.size(); ++j) {
    if (ids[j] == expected[j]) continue;
    if (++mismatches > 10) continue;
    const SamplingParams& p = cases[case_of[j]].params;
    ADD_FAILURE() << "row " << case_of[j] << " (T " << p.temperature << ", top_k " << p.top_k << ", top_p "
                  << p.top_p << ", min_p " << p.min_p << ", u " << specs[j].uniform << "): device " << ids[j]
                  << ", reference " << expected[j];
  }
  EXPECT_EQ(mismatches, 0) << "of " << specs.size() << " probes";
}

void run_cases(Backend& gpu, const std::vector<Case>& cases, int64_t vocab, std::mt19937& rng) {
  probe_rows(gpu, upload_rows(gpu, cases, vocab), cases, rng);
}

TEST(CudaSampling, MatchesTheHostFiltersAndAnIdOrderDraw) {
  PAGODA_NEED_GPU();
  std::unique_ptr<Backend> gpu = make_backend("cuda");
  ASSERT_TRUE(gpu->can_sample());
  std::mt19937 rng(7);
  for (const int64_t vocab : {1000, 49152, 128256}) {
    std::vector<Case> cases;
    for (int kind = 0; kind < 4; ++kind) {
      for (const float temperature : {0.0f, 0.7f, 1.0f, 1.6f}) {
        for (const int top_k : {0, 1, 7, 50}) {
          for (const float top_p : {1.0f, 0.9f, 0.3f}) {
            for (const float min_p : {0.0f, 0.05f}) {
              if (temperature == 0.0f && (top_k != 0 || top_p != 1.0f || min_p != 0.0f)) continue;
              Case c{random_row(rng, vocab, kind), {}};
              c.params.temperature = temperature;
              c.params.top_k = top_k;
              c.params.top_p = top_p;
              c.params.min_p = min_p;
              cases.push_back(std::move(c));
            }
          }
        }
      }
    }
    SCOPED_TRACE("vocab " + std::to_string(vocab));
    run_cases(*gpu, cases, vocab, rng);
  }
}

TEST(CudaSampling, HandsBackRowsTheHostMustTakeAndRefusesBadRows) {
  PAGODA_NEED_GPU();
  std::unique_ptr<Backend> gpu = make_backend("cuda");
  const int64_t vocab = 300;
  {  // A fresh backend's first call with one row (once wrote through a null output buffer).
    std::vector<float> row(static_cast<size_t>(vocab), 0.0f);
    row[123] = 1.0f;
    Tensor one = gpu->alloc(DType::F32, {1, vocab});
    gpu->copy_from_host(row.data(), one);
    SampleRowSpec greedy;
    greedy.greedy = 1;
    int32_t id = -7;
    gpu->sample(one, {&greedy, 1}, {}, &id);
    EXPECT_EQ(id, 123);
  }
  std::vector<float> rows(static_cast<size_t>(3 * vocab), 0.5f);
  rows[17] = std::numeric_limits<float>::quiet_NaN();                                // row 0: a NaN
  std::fill(rows.begin() + vocab, rows.begin() + 2 * vocab, -kInf);                  // row 1: all masked
  rows[static_cast<size_t>(2 * vocab + 5)] = kInf;                                   // row 2: +inf
  Tensor logits = gpu->alloc(DType::F32, {3, vocab});
  gpu->copy_from_host(rows.data(), logits);
  std::vector<SampleRowSpec> specs(3);
  for (int r = 0; r < 3; ++r) specs[static_cast<size_t>(r)].logit_row = r, specs[static_cast<size_t>(r)].greedy = 1;
  std::vector<int32_t> ids(3, 0);
  gpu->sample(logits, specs, {}, ids.data());
  EXPECT_EQ(ids, std::vector<int32_t>({-1, -1, -1}));

  SampleRowSpec outside;
  outside.logit_row = 3;
  EXPECT_THROW(gpu->sample(logits, {&outside, 1}, {}, ids.data()), Error);
  SampleRowSpec cold;
  cold.temperature = 0.0f;
  EXPECT_THROW(gpu->sample(logits, {&cold, 1}, {}, ids.data()), Error);
  SampleRowSpec edited;
  edited.greedy = 1;
  edited.edits_end = 1;  // one edit, but none given
  EXPECT_THROW(gpu->sample(logits, {&edited, 1}, {}, ids.data()), Error);
  const LogitEdit past_the_row{.token = static_cast<int32_t>(vocab), .masked = 1};
  EXPECT_THROW(gpu->sample(logits, {&edited, 1}, {&past_the_row, 1}, ids.data()), Error);
  EXPECT_FALSE(make_cpu_backend(1)->can_sample());
}

// Processors that touch many tokens: histories with repeats spread over the vocabulary,
// biases, bad words that complete after the output, min_tokens holding back stop tokens.
struct History {
  std::vector<int32_t> prompt, output;
};

History random_history(std::mt19937& rng, int64_t vocab) {
  std::uniform_int_distribution<int32_t> anywhere(0, static_cast<int32_t>(vocab) - 1), near(0, 99);
  History h;
  for (int i = 0; i < 300; ++i) h.prompt.push_back(i % 3 == 0 ? near(rng) : anywhere(rng));
  for (int i = 0; i < 80; ++i) h.output.push_back(i % 2 == 0 ? near(rng) : anywhere(rng));
  return h;
}

void add_random_processors(std::mt19937& rng, int64_t vocab, const History& h, SamplingParams& p) {
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> near(0, 99);
  p.repetition_penalty = unit(rng) < 0.7f ? 0.6f + 1.4f * unit(rng) : 1.0f;
  p.frequency_penalty = unit(rng) < 0.7f ? 3.0f * unit(rng) - 1.0f : 0.0f;
  p.presence_penalty = unit(rng) < 0.7f ? 3.0f * unit(rng) - 1.0f : 0.0f;
  for (int i = 0; i < 5; ++i) p.logit_bias[near(rng)] = 250.0f * unit(rng) - 125.0f;
  p.bad_words_token_ids = {{near(rng)}, {h.output.back(), near(rng)}};
  if (unit(rng) < 0.5f) {
    p.min_tokens = static_cast<int>(h.output.size()) + 1;
    p.stop_token_ids = {near(rng), static_cast<int32_t>(vocab) - 1};
    p.eos_token_ids = {near(rng)};
  }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Rows with processors, edited on the device by one sample() call with greedy specs. Returns
// the device logits; cases get the host-processed rows (and params without processors).
Tensor edit_on_device(Backend& gpu, std::mt19937& rng, int64_t vocab, std::vector<std::vector<float>> raw,
                      std::vector<Case>& cases, std::vector<int32_t>& ids) {
  std::vector<SampleRowSpec> specs;
  std::vector<LogitEdit> edits;
  ProcessorScratch scratch;
  std::vector<float> all;
  for (size_t r = 0; r < raw.size(); ++r) {
    std::vector<float>& row = raw[r];
    all.insert(all.end(), row.begin(), row.end());
    const History h = random_history(rng, vocab);
    SamplingParams p;
    p.temperature = r % 2 == 0 ? 0.0f : 0.8f;
    p.top_p = r % 3 == 0 ? 0.9f : 1.0f;
    p.top_k = r % 5 == 0 ? 40 : 0;
    add_random_processors(rng, vocab, h, p);
    SampleRowSpec spec;
    spec.logit_row = static_cast<int32_t>(r);
    spec.greedy = 1;
    spec.edits_begin = static_cast<int32_t>(edits.size());
    append_logit_edits(p, h.prompt, h.output, static_cast<size_t>(vocab), scratch, edits);
    spec.edits_end = static_cast<int32_t>(edits.size());
    spec.penalties = row_penalties(p);
    specs.push_back(spec);
    apply_logits_processors(row, p, h.prompt, h.output, scratch);
    Case c{std::move(row), {}};
    c.params.temperature = p.temperature;
    c.params.top_p = p.top_p;
    c.params.top_k = p.top_k;
    cases.push_back(std::move(c));
  }
  Tensor logits = gpu.alloc(DType::F32, {static_cast<int64_t>(raw.size()), vocab});
  gpu.copy_from_host(all.data(), logits);
  ids.assign(specs.size(), -7);
  gpu.sample(logits, specs, edits, ids.data());
  return logits;
}

// Every logit of every edited row equals the host's.
void expect_rows_equal(Backend& gpu, const Tensor& logits, const std::vector<Case>& cases, int64_t vocab) {
  std::vector<float> device(cases.size() * static_cast<size_t>(vocab));
  gpu.download(logits, device.data());
  for (size_t r = 0; r < cases.size(); ++r) {
    const std::vector<float>& host = cases[r].logits;
    for (size_t t = 0; t < host.size(); ++t) {
      const float d = device[r * static_cast<size_t>(vocab) + t];
      ASSERT_TRUE(same_bits(d, host[t])) << "row " << r << " token " << t << ": device " << d << ", host " << host[t];
    }
  }
}

TEST(CudaSampling, LogitEditsDoWhatTheHostProcessorsDo) {
  PAGODA_NEED_GPU();
  std::unique_ptr<Backend> gpu = make_backend("cuda");
  std::mt19937 rng(11);
  const int64_t vocab = 49152;
  std::vector<std::vector<float>> raw;
  for (int r = 0; r < 64; ++r) raw.push_back(random_row(rng, vocab, r % 4));
  std::vector<Case> cases;
  std::vector<int32_t> ids;
  const Tensor logits = edit_on_device(*gpu, rng, vocab, raw, cases, ids);
  expect_rows_equal(*gpu, logits, cases, vocab);
  for (size_t r = 0; r < cases.size(); ++r) EXPECT_EQ(ids[r], argmax_token(cases[r].logits)) << "row " << r;
  probe_rows(*gpu, logits, cases, rng);  // the draw from the edited rows: their distributions
}

TEST(CudaSampling, ARowHandedBackCarriesItsEdits) {
  PAGODA_NEED_GPU();
  std::unique_ptr<Backend> gpu = make_backend("cuda");
  std::mt19937 rng(12);
  const int64_t vocab = 1000;
  std::vector<float> row = random_row(rng, vocab, 0);
  row[777] = kInf;
  std::vector<Case> cases;
  std::vector<int32_t> ids;
  const Tensor logits = edit_on_device(*gpu, rng, vocab, {row}, cases, ids);
  EXPECT_EQ(ids[0], -1);
  expect_rows_equal(*gpu, logits, cases, vocab);  // what the host samples with processors_applied
}

// Edits and a random draw in one sample() call, as a decode step with processors and
// temperature runs them: the draw is the host processors' row through the host filters. A
// row per probe (the edits apply in place), each probed at the middle of a survivor's
// interval of the host-processed row's CDF.
TEST(CudaSampling, EditsThenADrawInOneCallAreTheHostProcessorsThenItsFilters) {
  PAGODA_NEED_GPU();
  std::unique_ptr<Backend> gpu = make_backend("cuda");
  std::mt19937 rng(15);
  const int64_t vocab = 4096;
  std::vector<float> all;
  std::vector<SampleRowSpec> specs;
  std::vector<LogitEdit> edits;
  std::vector<int32_t> expected;
  ProcessorScratch scratch;
  for (int r = 0; r < 24; ++r) {
    const std::vector<float> raw = random_row(rng, vocab, r % 4);
    const History h = random_history(rng, vocab);
    SamplingParams p;
    p.temperature = r % 3 == 0 ? 0.5f : 1.1f;
    p.top_p = r % 2 == 0 ? 0.8f : 1.0f;
    p.top_k = r % 4 == 1 ? 50 : 0;
    p.min_p = r % 5 == 2 ? 0.05f : 0.0f;
    add_random_processors(rng, vocab, h, p);
    std::vector<float> processed = raw;
    apply_logits_processors(processed, p, h.prompt, h.output, scratch);
    const std::vector<Interval> intervals = reference_intervals(processed, p);
    std::uniform_int_distribution<size_t> pick(0, intervals.size() - 1);
    for (int probe = 0; probe < 3; ++probe) {
      const Interval& iv = intervals[pick(rng)];
      if (iv.prob < 1e-6) continue;  // within float rounding of the total
      SampleRowSpec spec;
      spec.logit_row = static_cast<int32_t>(specs.size());
      spec.temperature = p.effective_temperature();
      spec.top_k = p.top_k;
      spec.top_p = p.top_p;
      spec.min_p = p.min_p;
      spec.uniform = iv.start + iv.prob / 2;
      spec.edits_begin = static_cast<int32_t>(edits.size());
      append_logit_edits(p, h.prompt, h.output, static_cast<size_t>(vocab), scratch, edits);
      spec.edits_end = static_cast<int32_t>(edits.size());
      spec.penalties = row_penalties(p);
      specs.push_back(spec);
      expected.push_back(iv.id);
      all.insert(all.end(), raw.begin(), raw.end());
    }
  }
  Tensor logits = gpu->alloc(DType::F32, {static_cast<int64_t>(specs.size()), vocab});
  gpu->copy_from_host(all.data(), logits);
  std::vector<int32_t> ids(specs.size(), -7);
  gpu->sample(logits, specs, edits, ids.data());
  for (size_t j = 0; j < specs.size(); ++j) {
    EXPECT_EQ(ids[j], expected[j]) << "probe " << j << " (u " << specs[j].uniform << ", T " << specs[j].temperature
                                   << ", top_k " << specs[j].top_k << ", top_p " << specs[j].top_p << ")";
  }
}

// Logprobs on the device are those of the raw logits (before the edits), as the host's
// log_softmax and gather_logprobs give them at the device's token: the same top ids in the
// same order (ties, on the coarse-grid rows, by id), the same ranks, and the same logprobs up
// to the rounding of a shift summed in another order.
TEST(CudaSampling, RawLogprobsAreTheHostsBeforeTheEdits) {
  PAGODA_NEED_GPU();
  std::unique_ptr<Backend> gpu = make_backend("cuda");
  std::mt19937 rng(13);
  for (const int64_t vocab : {1000, 128256}) {
    SCOPED_TRACE("vocab " + std::to_string(vocab));
    std::vector<std::vector<float>> raw;
    std::vector<SampleRowSpec> specs;
    std::vector<LogitEdit> edits;
    ProcessorScratch scratch;
    std::vector<float> all;
    for (int r = 0; r < 48; ++r) {
      raw.push_back(random_row(rng, vocab, r % 4));
      all.insert(all.end(), raw.back().begin(), raw.back().end());
      SampleRowSpec spec;
      spec.logit_row = r;
      spec.num_logprobs = std::array<int, 4>{0, 1, 5, kMaxDeviceLogprobs}[static_cast<size_t>(r / 4 % 4)];
      if (r % 3 == 0) {
        spec.greedy = 1;
      } else {
        spec.temperature = 0.8f;
        spec.top_k = r % 3 == 1 ? 40 : 0;
        spec.uniform = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      }
      if (r % 2 == 1) {  // processors: the logprobs must not see them
        const History h = random_history(rng, vocab);
        SamplingParams p;
        add_random_processors(rng, vocab, h, p);
        spec.edits_begin = static_cast<int32_t>(edits.size());
        append_logit_edits(p, h.prompt, h.output, static_cast<size_t>(vocab), scratch, edits);
        spec.edits_end = static_cast<int32_t>(edits.size());
        spec.penalties = row_penalties(p);
      }
      specs.push_back(spec);
    }
    Tensor logits = gpu->alloc(DType::F32, {static_cast<int64_t>(raw.size()), vocab});
    gpu->copy_from_host(all.data(), logits);
    std::vector<int32_t> ids(specs.size(), -7);
    std::vector<DeviceLogprobs> logprobs(specs.size());
    gpu->sample(logits, specs, edits, ids.data(), logprobs.data());
    std::vector<float> lp(static_cast<size_t>(vocab));
    std::vector<uint32_t> order;
    for (size_t r = 0; r < specs.size(); ++r) {
      SCOPED_TRACE("row " + std::to_string(r));
      ASSERT_GE(ids[r], 0);
      ASSERT_LT(ids[r], vocab);
      log_softmax(raw[r], lp);
      const TokenLogprobs want = gather_logprobs(lp, ids[r], specs[r].num_logprobs, order);
      const DeviceLogprobs& got = logprobs[r];
      EXPECT_NEAR(got.sampled_logprob, want.sampled.logprob, 1e-5);
      EXPECT_EQ(got.sampled_rank, want.sampled.rank);
      ASSERT_EQ(got.num_top, static_cast<int>(want.top.size()));
      for (size_t i = 0; i < want.top.size(); ++i) {
        EXPECT_EQ(got.top_ids[i], want.top[i].token) << "top " << i;
        EXPECT_NEAR(got.top_logprobs[i], want.top[i].logprob, 1e-5) << "top " << i;
      }
    }
  }
}

// A row with logprobs whose raw logits log_softmax treats specially (here a NaN) goes to the
// host whole: handed back, and with the raw logits the host Sampler starts from.
TEST(CudaSampling, ARowWithLogprobsIsHandedBackRaw) {
  PAGODA_NEED_GPU();
  std::unique_ptr<Backend> gpu = make_backend("cuda");
  std::mt19937 rng(14);
  const int64_t vocab = 1000;
  std::vector<float> row = random_row(rng, vocab, 0);
  row[321] = std::numeric_limits<float>::quiet_NaN();
  Tensor logits = gpu->alloc(DType::F32, {1, vocab});
  gpu->copy_from_host(row.data(), logits);
  const std::vector<LogitEdit> edits = {{.token = 5, .masked = 1}, {.token = 321, .masked = 1}};
  SampleRowSpec spec;
  spec.greedy = 1;
  spec.edits_end = 2;  // masks the NaN: the sampler alone would keep the row
  spec.num_logprobs = 3;
  int32_t id = -7;
  DeviceLogprobs logprobs;
  gpu->sample(logits, {&spec, 1}, edits, &id, &logprobs);
  EXPECT_EQ(id, -1);
  std::vector<float> back(static_cast<size_t>(vocab));
  gpu->download(logits, back.data());
  for (size_t t = 0; t < back.size(); ++t) ASSERT_TRUE(same_bits(back[t], row[t])) << "token " << t;

  spec.num_logprobs = kMaxDeviceLogprobs + 1;
  EXPECT_THROW(gpu->sample(logits, {&spec, 1}, {}, &id, &logprobs), Error);
  spec.num_logprobs = 1;
  EXPECT_THROW(gpu->sample(logits, {&spec, 1}, {}, &id, nullptr), Error);
}

}  // namespace
}  // namespace pagoda
