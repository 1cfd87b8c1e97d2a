// Test harness for the HTTP server: runs an HttpServer on its own thread (port 0) and
// hands the test the exchanges its handler receives, so the test can answer them later
// from its own thread, as the engine does.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "server/http_server.h"

namespace pagoda::http::testing {

// A queue of exchanges filled by the handler and drained by the test.
class ExchangeQueue {
 public:
  void push(std::shared_ptr<HttpExchange> exchange) {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(exchange));
    cv_.notify_all();
  }
  // nullptr if none arrives within the timeout.
  std::shared_ptr<HttpExchange> pop(std::chrono::seconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return !queue_.empty(); })) return nullptr;
    auto exchange = std::move(queue_.front());
    queue_.pop_front();
    return exchange;
  }
  HttpHandler handler() {
    return [this](std::shared_ptr<HttpExchange> exchange) { push(std::move(exchange)); };
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<HttpExchange>> queue_;
};

// Counts events from any thread; the test waits until a count is reached.
class Counter {
 public:
  void add() {
    std::lock_guard lock(mutex_);
    ++count_;
    cv_.notify_all();
  }
  bool wait_for(int n, std::chrono::seconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return count_ >= n; });
  }
  int count() {
    std::lock_guard lock(mutex_);
    return count_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_ = 0;
};

// Polls a condition (set by another thread) for up to the timeout.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::seconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

class RunningServer {
 public:
  RunningServer(HttpServerOptions options, HttpHandler handler)
      : server_(with_any_port(std::move(options)), std::move(handler)),
        thread_([this] { server_.run(); }) {}
  ~RunningServer() { stop(0.0); }
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;

  [[nodiscard]] int port() const { return server_.port(); }
  // Stops and waits for run() to return.
  void stop(double grace_s) {
    if (!thread_.joinable()) return;
    server_.stop(grace_s);
    thread_.join();
  }
  [[nodiscard]] bool running() const { return thread_.joinable(); }

 private:
  static HttpServerOptions with_any_port(HttpServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    return options;
  }
  HttpServer server_;
  std::thread thread_;
};

}  // namespace pagoda::http::testing
