// ServerMetrics: the text is valid 0.0.4 (read by a strict parser), carries vLLM's metric
// set under pagoda:, and every histogram agrees with a brute-force count of what was recorded.
#include "server/metrics.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "server/prometheus_parser.h"

namespace pagoda::server {
namespace {

using testing::PromFamily;
using testing::PromParser;

const PromFamily& family(const std::map<std::string, PromFamily>& f, const std::string& name) {
  auto it = f.find(name);
  if (it == f.end()) throw std::runtime_error("missing family " + name);
  return it->second;
}

double single_value(const std::map<std::string, PromFamily>& f, const std::string& name) {
  const PromFamily& fam = family(f, name);
  EXPECT_EQ(fam.samples.size(), 1u) << name;
  return fam.samples.at(0).value;
}

// Checks the histogram's buckets against the observed values by counting them directly.
void expect_histogram(const std::map<std::string, PromFamily>& f, const std::string& name,
                      const std::vector<double>& observed) {
  SCOPED_TRACE(name);
  const PromFamily& fam = family(f, name);
  ASSERT_EQ(fam.type, "histogram");
  double previous_le = -INFINITY, previous_count = 0, count = -1, sum = -1;
  int num_buckets = 0;
  for (const auto& s : fam.samples) {
    if (s.name == name + "_bucket") {
      ASSERT_TRUE(s.labels.count("le"));
      const double le = s.labels.at("le") == "+Inf" ? INFINITY : std::stod(s.labels.at("le"));
      EXPECT_GT(le, previous_le) << "buckets in increasing order";
      EXPECT_GE(s.value, previous_count) << "cumulative at le=" << le;
      double expected = 0;
      for (double v : observed) expected += (std::max(v, 0.0) <= le) ? 1 : 0;
      EXPECT_EQ(s.value, expected) << "le=" << le;
      previous_le = le;
      previous_count = s.value;
      ++num_buckets;
    } else if (s.name == name + "_count") {
      count = s.value;
    } else if (s.name == name + "_sum") {
      sum = s.value;
    } else {
      ADD_FAILURE() << "unexpected sample " << s.name;
    }
  }
  EXPECT_EQ(previous_le, INFINITY) << "the last bucket is +Inf";
  EXPECT_GT(num_buckets, 1);
  EXPECT_EQ(count, static_cast<double>(observed.size()));
  EXPECT_EQ(previous_count, count) << "+Inf bucket equals _count";
  double expected_sum = 0;
  for (double v : observed) expected_sum += std::max(v, 0.0);
  EXPECT_NEAR(sum, expected_sum, 1e-9 * (1 + expected_sum));
}

std::vector<double> bucket_bounds(const PromFamily& fam) {
  std::vector<double> out;
  for (const auto& s : fam.samples)
    if (s.labels.count("le") && s.labels.at("le") != "+Inf") out.push_back(std::stod(s.labels.at("le")));
  return out;
}

TEST(ServerMetrics, EmptyRenderIsValidAndLabelled) {
  ServerMetrics metrics("smol \"model\"\\x\n");
  const auto families = PromParser::parse(metrics.render(EngineStats{}));
  for (const char* name :
       {"pagoda:num_requests_running", "pagoda:num_requests_waiting", "pagoda:kv_cache_usage_perc",
        "pagoda:prefix_cache_queries_total", "pagoda:prefix_cache_hits_total",
        "pagoda:prompt_tokens_total", "pagoda:generation_tokens_total", "pagoda:request_success_total",
        "pagoda:num_preemptions_total", "pagoda:time_to_first_token_seconds",
        "pagoda:inter_token_latency_seconds", "pagoda:e2e_request_latency_seconds",
        "pagoda:request_queue_time_seconds", "pagoda:request_prompt_tokens",
        "pagoda:request_generation_tokens"}) {
    SCOPED_TRACE(name);
    const PromFamily& fam = family(families, name);
    EXPECT_FALSE(fam.help.empty());
    EXPECT_FALSE(fam.type.empty());
  }
  for (const auto& [name, fam] : families) {
    for (const auto& s : fam.samples) {
      EXPECT_EQ(s.labels.at("model_name"), "smol \"model\"\\x\n") << s.name;  // unescaped round trip
    }
  }
  // vLLM creates the success series for every finish reason up front.
  std::set<std::string> reasons;
  for (const auto& s : family(families, "pagoda:request_success_total").samples) {
    reasons.insert(s.labels.at("finished_reason"));
    EXPECT_EQ(s.value, 0);
  }
  EXPECT_EQ(reasons, (std::set<std::string>{"abort", "length", "stop"}));
}

TEST(ServerMetrics, GaugesAndCountersComeFromTheEngineSnapshot) {
  ServerMetrics metrics("m");
  EngineStats stats;
  stats.scheduler.num_running_reqs = 7;
  stats.scheduler.num_waiting_reqs = 3;
  stats.scheduler.kv_cache_usage = 0.375;
  stats.scheduler.prefix_cache.queries = 1000;
  stats.scheduler.prefix_cache.hits = 250;
  stats.scheduler.num_preemptions = 4;
  stats.num_prompt_tokens = 123456789;
  stats.num_generation_tokens = 98765;
  const auto f = PromParser::parse(metrics.render(stats));
  EXPECT_EQ(single_value(f, "pagoda:num_requests_running"), 7);
  EXPECT_EQ(single_value(f, "pagoda:num_requests_waiting"), 3);
  EXPECT_EQ(single_value(f, "pagoda:kv_cache_usage_perc"), 0.375);
  EXPECT_EQ(family(f, "pagoda:kv_cache_usage_perc").type, "gauge");
  EXPECT_EQ(single_value(f, "pagoda:prefix_cache_queries_total"), 1000);
  EXPECT_EQ(single_value(f, "pagoda:prefix_cache_hits_total"), 250);
  EXPECT_EQ(family(f, "pagoda:prefix_cache_hits_total").type, "counter");
  EXPECT_EQ(single_value(f, "pagoda:num_preemptions_total"), 4);
  EXPECT_EQ(single_value(f, "pagoda:prompt_tokens_total"), 123456789);
  EXPECT_EQ(single_value(f, "pagoda:generation_tokens_total"), 98765);
}

TEST(ServerMetrics, HistogramsAgreeWithWhatWasRecorded) {
  ServerMetrics metrics("m", 2048);
  std::mt19937 rng(7);
  std::exponential_distribution<double> seconds(2.0);
  std::uniform_int_distribution<int> tokens(0, 3000);
  std::vector<double> ttft, itl, e2e, queue, prompt, generation;
  std::map<std::string, double> reasons;
  const char* kReasons[] = {"stop", "length", "abort"};
  for (int r = 0; r < 300; ++r) {
    RequestTimes t;
    t.queue_s = r % 10 == 0 ? 0.5 : seconds(rng);  // exactly on a bucket bound sometimes
    t.ttft_s = r % 7 == 0 ? 0.001 : seconds(rng);
    t.num_prompt_tokens = r % 11 == 0 ? 20 : tokens(rng);
    t.num_generation_tokens = r % 13 == 0 ? 0 : tokens(rng) / 100;
    for (int k = 0; k < t.num_generation_tokens - 1; ++k) t.itl_s.push_back(seconds(rng) / 10);
    t.e2e_s = t.ttft_s + seconds(rng) * 20;
    t.finish_reason = kReasons[r % 3];
    if (r == 5) t.queue_s = -1e-6;  // a clock step reads as 0
    metrics.record(t);
    if (t.num_generation_tokens > 0) ttft.push_back(t.ttft_s);
    itl.insert(itl.end(), t.itl_s.begin(), t.itl_s.end());
    e2e.push_back(t.e2e_s);
    queue.push_back(t.queue_s);
    prompt.push_back(t.num_prompt_tokens);
    generation.push_back(t.num_generation_tokens);
    reasons[t.finish_reason] += 1;
  }
  const auto f = PromParser::parse(metrics.render(EngineStats{}));
  expect_histogram(f, "pagoda:time_to_first_token_seconds", ttft);
  expect_histogram(f, "pagoda:inter_token_latency_seconds", itl);
  expect_histogram(f, "pagoda:e2e_request_latency_seconds", e2e);
  expect_histogram(f, "pagoda:request_queue_time_seconds", queue);
  expect_histogram(f, "pagoda:request_prompt_tokens", prompt);
  expect_histogram(f, "pagoda:request_generation_tokens", generation);
  for (const auto& s : family(f, "pagoda:request_success_total").samples)
    EXPECT_EQ(s.value, reasons[s.labels.at("finished_reason")]) << s.labels.at("finished_reason");
  // Token histograms use vLLM's build_1_2_5_buckets(max_model_len).
  EXPECT_EQ(bucket_bounds(family(f, "pagoda:request_prompt_tokens")),
            (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}));
}

TEST(ServerMetrics, BucketSeriesOneTwoFive) {
  // The example in vLLM's docstring of build_1_2_5_buckets.
  EXPECT_EQ(buckets_1_2_5(100), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  EXPECT_EQ(buckets_1_2_5(4), (std::vector<double>{1, 2}));
  EXPECT_TRUE(buckets_1_2_5(0).empty());
}

TEST(ServerMetrics, ConcurrentRecordingLosesNothing) {
  ServerMetrics metrics("m");
  constexpr int kThreads = 8, kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&metrics] {
      for (int i = 0; i < kPerThread; ++i) {
        RequestTimes times;
        times.ttft_s = 0.25;
        times.e2e_s = 1.0;
        times.itl_s = {0.01, 0.02};
        times.num_generation_tokens = 3;
        times.finish_reason = "length";
        metrics.record(times);
      }
    });
  }
  // Renders while recording goes on must each be valid text.
  for (int i = 0; i < 20; ++i) EXPECT_NO_THROW(PromParser::parse(metrics.render(EngineStats{})));
  for (auto& t : threads) t.join();
  const auto f = PromParser::parse(metrics.render(EngineStats{}));
  const double n = kThreads * kPerThread;
  for (const auto& s : family(f, "pagoda:inter_token_latency_seconds").samples) {
    if (s.name.ends_with("_count")) {
      EXPECT_EQ(s.value, 2 * n);
    }
  }
  for (const auto& s : family(f, "pagoda:e2e_request_latency_seconds").samples) {
    if (s.name.ends_with("_sum")) {
      EXPECT_DOUBLE_EQ(s.value, n);
    }
  }
  for (const auto& s : family(f, "pagoda:request_success_total").samples)
    EXPECT_EQ(s.value, s.labels.at("finished_reason") == "length" ? n : 0);
}

TEST(PromParser, RejectsMalformedText) {
  // The checks above are only as good as the parser: it must refuse broken exposition.
  for (const char* bad : {
           "x 1",                                                     // undeclared family
           "# TYPE x gauge\nx{a=\"1} 2\n",                            // unterminated label
           "# TYPE x gauge\nx{a=\"\\q\"} 2\n",                        // bad escape
           "# TYPE x gauge\nx 1 2 3\n",                               // junk after value
           "# TYPE x gauge\nx abc\n",                                 // not a number
           "# TYPE x gauge\n# TYPE x gauge\nx 1\n",                   // second TYPE
           "# TYPE x gauge\nx 1\n# TYPE y gauge\ny 1\nx 2\n",         // family split
           "# TYPE 1x gauge\n1x 1\n",                                 // bad name
           "# TYPE x gauge\nx 1",                                     // no final newline
       }) {
    EXPECT_THROW(PromParser::parse(bad), std::runtime_error) << bad;
  }
  // Control: valid text with escapes, a histogram and a comment is accepted.
  const auto f = PromParser::parse(
      "# a comment\n# HELP h some \\ help\n# TYPE h histogram\nh_bucket{le=\"1.0\",m=\"a\\\"b\"} 1\n"
      "h_bucket{le=\"+Inf\",m=\"a\\\"b\"} 2\nh_count{m=\"a\\\"b\"} 2\nh_sum{m=\"a\\\"b\"} 3.5e0\n");
  EXPECT_EQ(family(f, "h").samples.size(), 4u);
  EXPECT_EQ(family(f, "h").samples[0].labels.at("m"), "a\"b");
}

}  // namespace
}  // namespace pagoda::server
