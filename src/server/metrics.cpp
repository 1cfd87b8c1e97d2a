// ServerMetrics: histograms and counters kept under one mutex, rendered as Prometheus
// text format 0.0.4 in the shape prometheus_client gives vLLM's /metrics.
#include "server/metrics.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <span>

namespace pagoda::server {

namespace {

// Bucket boundaries of vllm/v1/metrics/loggers.py (PrometheusStatLogger).
constexpr std::array kTtftBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                     0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0,
                                     20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
constexpr std::array kItlBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                    0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                    7.5,  10.0,  20.0, 40.0,  80.0};
constexpr std::array kRequestLatencyBuckets = {0.3,  0.5,  0.8,   1.0,   1.5,   2.0,    2.5,
                                               5.0,  10.0, 15.0,  20.0,  30.0,  40.0,   50.0,
                                               60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
// vLLM seeds request_success with every FinishReason, so the series exist from the start.
constexpr std::array kFinishReasons = {"stop", "length", "abort"};
constexpr int64_t kDefaultMaxModelLen = 100000;

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds)
      : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

  void observe(double value) {
    if (!std::isfinite(value)) return;
    value = std::max(value, 0.0);
    size_t i = 0;
    while (i < bounds_.size() && value > bounds_[i]) ++i;  // `le` is inclusive
    ++counts_[i];
    sum_ += value;
    ++count_;
  }

  [[nodiscard]] const std::vector<double>& bounds() const { return bounds_; }
  [[nodiscard]] const std::vector<int64_t>& counts() const { return counts_; }  // per bucket, +Inf last
  [[nodiscard]] double sum() const { return sum_; }
  [[nodiscard]] int64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;
  double sum_ = 0;
  int64_t count_ = 0;
};

// Shortest text that reads back as the same double; `le` values keep a ".0" as Python's
// float repr does, so our bucket labels match vLLM's byte for byte.
std::string format_double(double value, bool as_label) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto fmt = as_label ? std::chars_format::fixed : std::chars_format::general;
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, fmt);
  std::string text(buf, ec == std::errc() ? end : buf);
  if (as_label && text.find('.') == std::string::npos) text += ".0";
  return text;
}

// Label values escape backslash, double quote and newline; HELP text backslash and newline.
std::string escape(std::string_view text, bool label_value) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && label_value) out += "\\\"";
    else out += c;
  }
  return out;
}

class TextWriter {
 public:
  explicit TextWriter(std::string labels) : labels_(std::move(labels)) {}

  void family(std::string_view name, std::string_view help, std::string_view type) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += escape(help, false);
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  // One sample; extra is a pre-escaped `,key="value"` suffix for the label set.
  void sample(std::string_view name, double value, std::string_view extra = {}) {
    out_ += name;
    out_ += '{';
    out_ += labels_;
    out_ += extra;
    out_ += "} ";
    out_ += format_double(value, false);
    out_ += '\n';
  }
  void gauge(std::string_view name, std::string_view help, double value) {
    family(name, help, "gauge");
    sample(name, value);
  }
  void counter(std::string_view name, std::string_view help, double value) {
    family(name, help, "counter");
    sample(name, value);
  }
  void histogram(const std::string& name, std::string_view help, const Histogram& h) {
    family(name, help, "histogram");
    int64_t cumulative = 0;
    for (size_t i = 0; i <= h.bounds().size(); ++i) {
      cumulative += h.counts()[i];
      const double le = i < h.bounds().size() ? h.bounds()[i] : INFINITY;
      sample(name + "_bucket", static_cast<double>(cumulative),
             ",le=\"" + format_double(le, true) + "\"");
    }
    sample(name + "_count", static_cast<double>(h.count()));
    sample(name + "_sum", h.sum());
  }
  [[nodiscard]] std::string take() { return std::move(out_); }

 private:
  std::string labels_;
  std::string out_;
};

std::vector<double> to_vector(std::span<const double> values) { return {values.begin(), values.end()}; }

}  // namespace

std::vector<double> buckets_1_2_5(int64_t max_value) {
  std::vector<double> buckets;
  for (int64_t scale = 1; scale <= max_value; scale *= 10) {
    for (int64_t mantissa : {1, 2, 5}) {
      if (mantissa * scale > max_value) return buckets;
      buckets.push_back(static_cast<double>(mantissa * scale));
    }
  }
  return buckets;
}

struct ServerMetrics::Impl {
  Impl(std::string model, int64_t max_model_len)
      : labels("model_name=\"" + escape(model, true) + "\""),
        prompt_tokens(buckets_1_2_5(max_model_len)),
        generation_tokens(buckets_1_2_5(max_model_len)) {
    for (const char* reason : kFinishReasons) success[reason] = 0;
  }

  const std::string labels;
  mutable std::mutex mu;
  Histogram ttft{to_vector(kTtftBuckets)};
  Histogram itl{to_vector(kItlBuckets)};
  Histogram e2e{to_vector(kRequestLatencyBuckets)};
  Histogram queue{to_vector(kRequestLatencyBuckets)};
  Histogram prompt_tokens;
  Histogram generation_tokens;
  std::map<std::string, int64_t> success;  // by finish reason
};

ServerMetrics::ServerMetrics(std::string model_name, int64_t max_model_len)
    : impl_(std::make_shared<Impl>(std::move(model_name),
                                   max_model_len > 0 ? max_model_len : kDefaultMaxModelLen)) {}

void ServerMetrics::record(const RequestTimes& times) {
  std::lock_guard lock(impl_->mu);
  if (times.num_generation_tokens > 0) impl_->ttft.observe(times.ttft_s);
  for (double gap : times.itl_s) impl_->itl.observe(gap);
  impl_->e2e.observe(times.e2e_s);
  impl_->queue.observe(times.queue_s);
  impl_->prompt_tokens.observe(times.num_prompt_tokens);
  impl_->generation_tokens.observe(times.num_generation_tokens);
  ++impl_->success[times.finish_reason.empty() ? "abort" : times.finish_reason];
}

std::string ServerMetrics::render(const EngineStats& stats) const {
  TextWriter w(impl_->labels);
  const SchedulerStats& s = stats.scheduler;
  w.gauge("pagoda:num_requests_running", "Number of requests in model execution batches.",
          s.num_running_reqs);
  w.gauge("pagoda:num_requests_waiting", "Number of requests waiting to be processed.",
          s.num_waiting_reqs);
  w.gauge("pagoda:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
          s.kv_cache_usage);
  w.counter("pagoda:prefix_cache_queries_total",
            "Prefix cache queries, in terms of number of queried tokens.",
            static_cast<double>(s.prefix_cache.queries));
  w.counter("pagoda:prefix_cache_hits_total",
            "Prefix cache hits, in terms of number of cached tokens.",
            static_cast<double>(s.prefix_cache.hits));
  w.counter("pagoda:num_preemptions_total", "Cumulative number of preemption from the engine.",
            static_cast<double>(s.num_preemptions));
  w.counter("pagoda:prompt_tokens_total", "Number of prefill tokens processed.",
            static_cast<double>(stats.num_prompt_tokens));
  w.counter("pagoda:generation_tokens_total", "Number of generation tokens processed.",
            static_cast<double>(stats.num_generation_tokens));

  std::lock_guard lock(impl_->mu);
  w.family("pagoda:request_success_total", "Count of successfully processed requests.", "counter");
  for (const auto& [reason, count] : impl_->success) {
    w.sample("pagoda:request_success_total", static_cast<double>(count),
             ",finished_reason=\"" + escape(reason, true) + "\"");
  }
  w.histogram("pagoda:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
              impl_->ttft);
  w.histogram("pagoda:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
              impl_->itl);
  w.histogram("pagoda:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
              impl_->e2e);
  w.histogram("pagoda:request_queue_time_seconds",
              "Histogram of time spent in WAITING phase for request.", impl_->queue);
  w.histogram("pagoda:request_prompt_tokens", "Number of prefill tokens processed.",
              impl_->prompt_tokens);
  w.histogram("pagoda:request_generation_tokens", "Number of generation tokens processed.",
              impl_->generation_tokens);
  return w.take();
}

}  // namespace pagoda::server
