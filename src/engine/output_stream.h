// One request's outputs, passed from the engine thread to a reader. Deltas that the
// reader has not taken yet are merged into one, so a slow reader costs one pending delta
// (bounded by the request's own output), and nothing is lost.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include "engine/request_output.h"

namespace pagoda {

class OutputStream {
 public:
  // Engine side.
  void push(RequestOutput delta);
  // Ends the stream with an error (e.g. the engine failed); next() then throws it.
  void fail_with(std::string message);

  // Reader side: blocks until a delta is pending; nullopt once the final one was taken.
  // Throws Error when the engine failed the stream.
  [[nodiscard]] std::optional<RequestOutput> next();
  // Non-blocking: the pending delta, if any.
  [[nodiscard]] std::optional<RequestOutput> try_next();

 private:
  std::optional<RequestOutput> take_locked();

  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<RequestOutput> pending_;
  bool closed_ = false;  // the final delta was pushed
  std::string error_;
};

}  // namespace pagoda
