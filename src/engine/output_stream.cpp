#include "engine/output_stream.h"

#include <algorithm>

#include "core/error.h"

namespace pagoda {

void OutputStream::push(RequestOutput delta) {
  std::function<void()> listener;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    if (delta.finished && --num_open_ <= 0) closed_ = true;
    const auto same = std::find_if(pending_.begin(), pending_.end(),
                                   [&](const RequestOutput& p) { return p.index == delta.index; });
    if (same != pending_.end()) {
      same->merge(std::move(delta));
    } else {
      pending_.push_back(std::move(delta));
    }
    listener = listener_;
  }
  cv_.notify_all();
  if (listener) listener();
}

void OutputStream::fail_with(std::string message) {
  std::function<void()> listener;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    error_ = std::move(message);
    listener = listener_;
  }
  cv_.notify_all();
  if (listener) listener();
}

void OutputStream::set_listener(std::function<void()> listener) {
  bool ready = false;
  {
    std::lock_guard lock(mu_);
    listener_ = listener;
    ready = !pending_.empty() || closed_;
  }
  if (ready && listener) listener();
}

std::optional<RequestOutput> OutputStream::take_locked() {
  if (pending_.empty()) {
    if (!error_.empty()) fail(error_);
    return std::nullopt;
  }
  std::optional<RequestOutput> out = std::move(pending_.front());
  pending_.erase(pending_.begin());
  return out;
}

std::optional<RequestOutput> OutputStream::next() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !pending_.empty() || closed_; });
  return take_locked();
}

std::optional<RequestOutput> OutputStream::try_next() {
  std::lock_guard lock(mu_);
  return take_locked();
}

bool OutputStream::closed() {
  std::lock_guard lock(mu_);
  return closed_;
}

}  // namespace pagoda
