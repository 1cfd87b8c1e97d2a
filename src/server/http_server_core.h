// What every connection of the HTTP server shares: the options, the handler, the set of
// open connections (for max_connections and stop()) and the lifeline that tells
// exchanges held by other threads whether the server's io_context still exists.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "server/http_server.h"

namespace pagoda::http::detail {

class Connection;

// Exchanges may outlive the server in a handler's hands; they post only while alive.
struct Lifeline {
  std::shared_mutex mutex;
  bool alive = true;
};

class ServerCore {
 public:
  ServerCore(HttpServerOptions server_options, HttpHandler request_handler)
      : options(std::move(server_options)), handler(std::move(request_handler)),
        lifeline(std::make_shared<Lifeline>()) {}

  const HttpServerOptions options;
  const HttpHandler handler;
  const std::shared_ptr<Lifeline> lifeline;
  std::atomic<bool> stopping{false};
  // Runs (on a connection's strand) when the last connection closes during stop().
  std::function<void()> on_drained;

  // False when max_connections are already open.
  [[nodiscard]] bool add(const std::shared_ptr<Connection>& connection) {
    std::lock_guard lock(mutex_);
    if (static_cast<int>(connections_.size()) >= options.max_connections) return false;
    connections_.insert_or_assign(connection.get(), connection);
    return true;
  }
  void remove(const Connection* connection) {
    bool drained = false;
    {
      std::lock_guard lock(mutex_);
      connections_.erase(connection);
      drained = connections_.empty() && stopping.load();
    }
    if (drained && on_drained) on_drained();
  }
  [[nodiscard]] std::vector<std::shared_ptr<Connection>> snapshot() const {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<Connection>> out;
    out.reserve(connections_.size());
    for (const auto& [raw, weak] : connections_)
      if (auto strong = weak.lock()) out.push_back(std::move(strong));
    return out;
  }
  [[nodiscard]] size_t size() const {
    std::lock_guard lock(mutex_);
    return connections_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections_;
};

}  // namespace pagoda::http::detail
