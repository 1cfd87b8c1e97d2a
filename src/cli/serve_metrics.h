// The summary of a serving benchmark, computed exactly as `vllm bench serve` does
// (vllm/benchmarks/serve.py, calculate_metrics): per-request TTFT, TPOT, ITL and E2EL,
// reduced to mean / median / std / percentiles with numpy's definitions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pagoda::cli {

// What the client saw of one request (seconds).
struct RequestRecord {
  bool success = false;
  std::string error;
  int prompt_len = 0;         // from usage.prompt_tokens when the server sent it
  int output_tokens = 0;      // usage.completion_tokens, else counted by the tokenizer
  double ttft = 0;            // sent -> first event with choices
  std::vector<double> itl;    // between consecutive events with choices
  double latency = 0;         // sent -> last event with choices
  double start = 0;           // sent, relative to the benchmark start
};

// numpy.percentile's default ("linear") interpolation; 0 for an empty list as
// vLLM's `np.percentile(values or 0, p)`.
[[nodiscard]] double percentile(std::vector<double> values, double p);

// The JSON vLLM writes (duration, completed, failed, throughputs, {mean,median,std,pNN}_
// {ttft,tpot,itl,e2el}_ms, max_concurrent_requests) plus the per-request lists.
[[nodiscard]] nlohmann::json serve_metrics(const std::vector<RequestRecord>& records,
                                           double duration_s, const std::vector<double>& percentiles);

}  // namespace pagoda::cli
