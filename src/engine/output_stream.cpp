#include "engine/output_stream.h"

#include "core/error.h"

namespace pagoda {

void OutputStream::push(RequestOutput delta) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = delta.finished;
    if (pending_) {
      pending_->merge(std::move(delta));
    } else {
      pending_ = std::move(delta);
    }
  }
  cv_.notify_all();
}

void OutputStream::fail_with(std::string message) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    error_ = std::move(message);
  }
  cv_.notify_all();
}

std::optional<RequestOutput> OutputStream::take_locked() {
  if (!pending_ && !error_.empty()) fail(error_);
  std::optional<RequestOutput> out = std::move(pending_);
  pending_.reset();
  return out;
}

std::optional<RequestOutput> OutputStream::next() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return pending_ || closed_; });
  return take_locked();
}

std::optional<RequestOutput> OutputStream::try_next() {
  std::lock_guard lock(mu_);
  return take_locked();
}

}  // namespace pagoda
