// Per-op GPU time for finding where a step's time goes (PAGODA_PROFILE=1): each op is
// bracketed by two CUDA events on the backend's stream; after each synchronizing call the
// pending pairs are read and summed by op name. At destruction the totals go to stderr,
// with the GPU time not inside any op (launch gaps: the host not keeping the GPU busy).
// Disabled, every call is a branch.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

namespace pagoda::cuda {

class OpProfile {
 public:
  OpProfile(cudaStream_t stream, bool enabled) : stream_(stream), enabled_(enabled) {}
  ~OpProfile();
  OpProfile(const OpProfile&) = delete;
  OpProfile& operator=(const OpProfile&) = delete;

  [[nodiscard]] bool enabled() const { return enabled_ && !suspended_; }
  // While a graph is captured no events are recorded (the graph's replay is one op).
  void suspend(bool on) { suspended_ = on; }
  // Brackets the work queued between begin(name) and end(). Brackets nest (fused_matmul
  // may run as rms_norm + matmul): only the outermost is timed, inner ones count in it.
  void begin(std::string name);
  void end();
  // After the stream has been synchronized: adds the finished pairs to the totals.
  void collect();

  // RAII bracket; a no-op when profiling is off.
  class Scope {
   public:
    Scope(OpProfile& p, const char* name) : p_(p.enabled() ? &p : nullptr) {
      if (p_ != nullptr) p_->begin(name);
    }
    ~Scope() {
      if (p_ != nullptr) p_->end();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    OpProfile* p_;
  };

 private:
  struct Pending {
    std::string name;
    cudaEvent_t start, stop;
  };
  struct Total {
    double ms = 0;
    long calls = 0;
  };
  cudaEvent_t take_event();

  cudaStream_t stream_;
  bool enabled_;
  bool suspended_ = false;
  int depth_ = 0;  // open brackets
  std::vector<Pending> pending_;
  std::vector<cudaEvent_t> free_events_;
  std::map<std::string, Total> totals_;
  double span_ms_ = 0;  // first start to last stop of each collected batch
};

}  // namespace pagoda::cuda
