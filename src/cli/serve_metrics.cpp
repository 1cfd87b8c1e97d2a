// calculate_metrics of vllm/benchmarks/serve.py, restated: TPOT is (latency - ttft) /
// (output_tokens - 1) for requests with more than one token; ITLs of all requests are
// pooled; std is the population standard deviation (np.std).
#include "cli/serve_metrics.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace pagoda::cli {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

namespace {

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

double stddev(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const double m = mean(v);
  double sq = 0;
  for (double x : v) sq += (x - m) * (x - m);
  return std::sqrt(sq / static_cast<double>(v.size()));
}

// "99" for 99.0 and "99.9" for 99.9, as vLLM names its pNN keys.
std::string percentile_word(double p) {
  if (p == std::floor(p)) return std::to_string(static_cast<long long>(p));
  std::ostringstream out;
  out << p;
  return out.str();
}

void add_stats(nlohmann::json& out, const std::string& name, const std::vector<double>& seconds,
               const std::vector<double>& percentiles) {
  // Keys built by append: GCC 12 warns (-Wrestrict) on `"literal" + std::string&&` falsely.
  auto key = [&name](std::string_view head) {
    std::string k(head);
    k.append("_").append(name).append("_ms");
    return k;
  };
  out[key("mean")] = mean(seconds) * 1000;
  out[key("median")] = percentile(seconds, 50) * 1000;
  out[key("std")] = stddev(seconds) * 1000;
  for (double p : percentiles) out[key(std::string("p").append(percentile_word(p)))] = percentile(seconds, p) * 1000;
}

// Peak number of requests in flight: a sweep over half-open [start, start + latency).
int peak_concurrency(const std::vector<RequestRecord>& records) {
  std::vector<std::pair<double, int>> events;
  for (const auto& r : records) {
    if (!r.success) continue;
    events.emplace_back(r.start, 1);
    events.emplace_back(r.start + r.latency, -1);
  }
  std::sort(events.begin(), events.end());  // at a tie, departures (-1) sort first
  int current = 0, peak = 0;
  for (const auto& e : events) peak = std::max(peak, current += e.second);
  return peak;
}

}  // namespace

nlohmann::json serve_metrics(const std::vector<RequestRecord>& records, double duration_s,
                             const std::vector<double>& percentiles) {
  std::vector<double> ttfts, tpots, itls, e2els;
  long long total_input = 0, total_output = 0;
  int completed = 0, failed = 0;
  nlohmann::json input_lens = nlohmann::json::array(), output_lens = nlohmann::json::array();
  nlohmann::json ttft_list = nlohmann::json::array(), itl_list = nlohmann::json::array();
  nlohmann::json latency_list = nlohmann::json::array(), errors = nlohmann::json::array();
  for (const auto& r : records) {
    input_lens.push_back(r.prompt_len);
    ttft_list.push_back(r.ttft);
    itl_list.push_back(r.itl);
    latency_list.push_back(r.latency);
    errors.push_back(r.error);
    if (!r.success) {
      ++failed;
      output_lens.push_back(0);
      continue;
    }
    ++completed;
    output_lens.push_back(r.output_tokens);
    total_input += r.prompt_len;
    total_output += r.output_tokens;
    if (r.output_tokens > 1) tpots.push_back((r.latency - r.ttft) / (r.output_tokens - 1));
    itls.insert(itls.end(), r.itl.begin(), r.itl.end());
    ttfts.push_back(r.ttft);
    e2els.push_back(r.latency);
  }
  nlohmann::json out = {
      {"duration", duration_s},
      {"completed", completed},
      {"failed", failed},
      {"total_input_tokens", total_input},
      {"total_output_tokens", total_output},
      {"request_throughput", completed / duration_s},
      {"output_throughput", static_cast<double>(total_output) / duration_s},
      {"total_token_throughput", static_cast<double>(total_input + total_output) / duration_s},
      {"max_concurrent_requests", peak_concurrency(records)},
  };
  add_stats(out, "ttft", ttfts, percentiles);
  add_stats(out, "tpot", tpots, percentiles);
  add_stats(out, "itl", itls, percentiles);
  add_stats(out, "e2el", e2els, percentiles);
  out["input_lens"] = std::move(input_lens);
  out["output_lens"] = std::move(output_lens);
  out["ttfts"] = std::move(ttft_list);
  out["itls"] = std::move(itl_list);
  out["latencies"] = std::move(latency_list);
  out["errors"] = std::move(errors);
  return out;
}

}  // namespace pagoda::cli
