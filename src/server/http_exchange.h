// The HttpExchange handed to the handler: a thread-safe facade that posts every call
// onto its connection's strand; the phase and the disconnect callback live there.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/http_server.h"

namespace pagoda::http::detail {

class Connection;
struct Lifeline;
using Headers = std::vector<std::pair<std::string, std::string>>;

class ExchangeImpl final : public HttpExchange, public std::enable_shared_from_this<ExchangeImpl> {
 public:
  // Pending: no answer yet; Streaming: head sent; Flushing: answer complete, still being
  // written; Done: last byte written; Disconnected: the client went away first.
  enum class Phase { Pending, Streaming, Flushing, Done, Disconnected };

  ExchangeImpl(HttpRequest request, std::weak_ptr<Connection> connection,
               std::shared_ptr<Lifeline> lifeline);

  [[nodiscard]] const HttpRequest& request() const override { return request_; }
  void respond(HttpResponse response) override;
  void begin_stream(int status, std::string content_type, Headers headers) override;
  void write(std::string data) override;
  void end_stream() override;
  [[nodiscard]] size_t pending_bytes() const override;
  void on_disconnect(std::function<void()> callback) override;
  [[nodiscard]] bool disconnected() const override { return disconnected_.load(); }

  // Strand only (the connection drives these).
  Phase phase = Phase::Pending;
  void mark_disconnected();
  void mark_done() { phase = Phase::Done; callback_ = nullptr; }
  void add_pending(size_t n) { pending_.fetch_add(n); }
  void sub_pending(size_t n) { pending_.fetch_sub(n); }

 private:
  // Runs fn(connection) on the connection's strand; if the connection or the server is
  // gone, runs gone() on the calling thread instead.
  template <class Fn, class Gone>
  void post(Fn fn, Gone gone);
  void set_callback(std::function<void()> callback);

  const HttpRequest request_;
  const std::weak_ptr<Connection> connection_;
  const std::shared_ptr<Lifeline> lifeline_;
  std::function<void()> callback_;  // strand only
  std::atomic<bool> disconnected_{false};
  std::atomic<size_t> pending_{0};
};

}  // namespace pagoda::http::detail
