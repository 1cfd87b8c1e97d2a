// Admission control for --max-num-queued-requests / --max-num-queued-tokens: the server
// counts the engine requests it has admitted that the scheduler has not started yet, and
// refuses (429) a request that would take the queue past either limit. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>

namespace pagoda::server {

class AdmissionControl {
 public:
  // 0: no limit.
  AdmissionControl(int64_t max_requests, int64_t max_tokens) : max_requests_(max_requests), max_tokens_(max_tokens) {}

  // Admits num_requests engine requests of num_tokens prompt tokens in all, or refuses.
  // An empty queue admits anything, so one request larger than the token limit is not
  // refused forever.
  [[nodiscard]] bool try_admit(int64_t num_requests, int64_t num_tokens) {
    std::lock_guard lock(mu_);
    const bool empty = requests_ == 0;
    if (!empty && max_requests_ > 0 && requests_ + num_requests > max_requests_) return false;
    if (!empty && max_tokens_ > 0 && tokens_ + num_tokens > max_tokens_) return false;
    if (empty && max_requests_ > 0 && num_requests > max_requests_) return false;
    requests_ += num_requests;
    tokens_ += num_tokens;
    return true;
  }
  // Admitted engine requests left the queue (scheduled, finished or refused).
  void release(int64_t num_requests, int64_t num_tokens) {
    std::lock_guard lock(mu_);
    requests_ -= num_requests;
    tokens_ -= num_tokens;
  }
  [[nodiscard]] int64_t num_queued_requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  mutable std::mutex mu_;
  int64_t max_requests_;
  int64_t max_tokens_;
  int64_t requests_ = 0;
  int64_t tokens_ = 0;
};

}  // namespace pagoda::server
