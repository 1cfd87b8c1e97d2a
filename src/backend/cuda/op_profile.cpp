#include "backend/cuda/op_profile.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace pagoda::cuda {

OpProfile::~OpProfile() {
  if (!enabled_) return;
  cudaStreamSynchronize(stream_);
  collect();
  std::vector<std::pair<std::string, Total>> rows(totals_.begin(), totals_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  double inside = 0;
  for (const auto& [name, t] : rows) inside += t.ms;
  std::fprintf(stderr, "PAGODA_PROFILE: GPU time by op (ms, calls, share of the span %.1f ms)\n", span_ms_);
  for (const auto& [name, t] : rows) {
    std::fprintf(stderr, "  %-40s %10.2f %8ld %6.1f%%\n", name.c_str(), t.ms, t.calls,
                 span_ms_ > 0 ? 100.0 * t.ms / span_ms_ : 0.0);
  }
  std::fprintf(stderr, "  %-40s %10.2f %8s %6.1f%%\n", "(between ops: launch gaps, host waits)", span_ms_ - inside, "",
               span_ms_ > 0 ? 100.0 * (span_ms_ - inside) / span_ms_ : 0.0);
  for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
}

cudaEvent_t OpProfile::take_event() {
  if (!free_events_.empty()) {
    cudaEvent_t e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  cudaEventCreate(&e);
  return e;
}

void OpProfile::begin(std::string name) {
  if (depth_++ > 0) return;
  Pending p{std::move(name), take_event(), take_event()};
  cudaEventRecord(p.start, stream_);
  pending_.push_back(std::move(p));
}

void OpProfile::end() {
  // An inner bracket recording the outer one's stop left that one's stop unrecorded, and
  // reading its time failed with "invalid resource handle", which the next kernel's launch
  // check then reported as its own error.
  if (--depth_ > 0) return;
  if (!pending_.empty()) cudaEventRecord(pending_.back().stop, stream_);
}

void OpProfile::collect() {
  if (!enabled_ || pending_.empty()) return;
  float span = 0;
  cudaEventElapsedTime(&span, pending_.front().start, pending_.back().stop);
  span_ms_ += span;
  for (Pending& p : pending_) {
    float ms = 0;
    cudaEventElapsedTime(&ms, p.start, p.stop);
    Total& t = totals_[p.name];
    t.ms += ms;
    ++t.calls;
    free_events_.push_back(p.start);
    free_events_.push_back(p.stop);
  }
  pending_.clear();
}

}  // namespace pagoda::cuda
