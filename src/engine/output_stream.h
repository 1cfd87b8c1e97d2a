// One request's outputs, passed from the engine thread to a reader. Deltas that the
// reader has not taken yet are merged, one pending delta per choice (RequestOutput::index),
// so a slow reader costs at most n pending deltas (bounded by the request's own output),
// and nothing is lost. The stream ends once every one of its n choices has finished.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/request_output.h"

namespace pagoda {

class OutputStream {
 public:
  explicit OutputStream(int num_choices = 1) : num_open_(num_choices) {}

  // Engine side.
  void push(RequestOutput delta);
  // Ends the stream with an error (e.g. the engine failed); next() then throws it.
  void fail_with(std::string message);

  // Reader side, for asynchronous front ends: `listener` runs (on the engine thread, so it
  // must only post work elsewhere and return) after every push or failure, and at once
  // here if something is already pending or the stream has ended. Replaces any earlier one.
  void set_listener(std::function<void()> listener);

  // Reader side: blocks until a delta is pending; nullopt once the final one was taken.
  // With several choices pending, the one that has waited longest comes first.
  // Throws Error when the engine failed the stream.
  [[nodiscard]] std::optional<RequestOutput> next();
  // Non-blocking: the pending delta, if any.
  [[nodiscard]] std::optional<RequestOutput> try_next();
  // Every choice's final delta was pushed (or the stream failed): nothing more will come.
  [[nodiscard]] bool closed();

 private:
  std::optional<RequestOutput> take_locked();

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<RequestOutput> pending_;  // at most one per choice, oldest first
  int num_open_;                        // choices whose final delta was not pushed yet
  bool closed_ = false;                 // every final delta was pushed, or the stream failed
  std::string error_;
  std::function<void()> listener_;
};

}  // namespace pagoda
