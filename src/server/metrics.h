// Prometheus metrics for GET /metrics, with vLLM's metric set under the `pagoda:` prefix:
// gauges from the engine's snapshot (running / waiting requests, KV usage), counters
// (prefix-cache queries and hits, prompt and generation tokens, finished requests by
// reason) and histograms of per-request latencies that the front end records.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_stats.h"

namespace pagoda::server {

// The Content-Type of render()'s text (Prometheus text exposition format 0.0.4).
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// What the front end measured for one finished request (seconds).
struct RequestTimes {
  double queue_s = 0;        // added -> first scheduled (RequestOutput::queue_time_s)
  double ttft_s = 0;         // arrival at the server -> first output token
  std::vector<double> itl_s; // between consecutive output deltas that carried tokens
  double e2e_s = 0;          // arrival -> final delta
  int num_prompt_tokens = 0;
  int num_generation_tokens = 0;
  std::string finish_reason;  // "stop", "length", "abort"
};

class ServerMetrics {
 public:
  // max_model_len bounds the token-count histograms' 1-2-5 buckets, as in vLLM; 0 stands
  // for 100000 when the front end does not know it.
  explicit ServerMetrics(std::string model_name, int64_t max_model_len = 0);
  // Thread-safe. ttft_s is observed only for requests that produced a token; negative
  // times (clock steps) count as 0 and non-finite ones are dropped.
  void record(const RequestTimes& times);
  // The exposition text (text/plain; version=0.0.4), every metric labelled model_name.
  [[nodiscard]] std::string render(const EngineStats& stats) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// vLLM's bucket series for token counts: 1, 2, 5, 10, 20, 50, ... up to max_value.
[[nodiscard]] std::vector<double> buckets_1_2_5(int64_t max_value);

}  // namespace pagoda::server
