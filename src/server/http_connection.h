// One accepted TCP connection of the HTTP server, driven on its own strand: a read loop
// that parses requests and, while an answer is pending, keeps reading so that a client
// that goes away is noticed at once; a write queue that the exchange feeds from any thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "server/http_exchange.h"
#include "server/http_server_core.h"

namespace pagoda::http::detail {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, ServerCore& core);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  [[nodiscard]] boost::asio::any_io_executor executor() { return socket_.get_executor(); }
  // Thread-safe: spawns the read loop on the strand.
  void start();
  // Thread-safe, for HttpServer::stop(): close when idle, else after the current answer.
  void post_graceful_close();
  // Thread-safe: close now; a pending exchange becomes disconnected.
  void post_abort();

  // Strand only, called for the exchange (ExchangeImpl posts them).
  void respond(ExchangeImpl& exchange, HttpResponse response);
  void begin_stream(ExchangeImpl& exchange, int status, std::string content_type, Headers headers);
  void write(ExchangeImpl& exchange, std::string data);
  void end_stream(ExchangeImpl& exchange);
  void handler_failed(ExchangeImpl& exchange, const std::string& message);

 private:
  struct Piece {
    std::string bytes;
    size_t payload = 0;  // bytes the handler passed in, for pending_bytes()
  };

  boost::asio::awaitable<void> read_loop();
  boost::asio::awaitable<void> write_loop();
  void process_input();
  bool check_header(const boost::beast::http::request_parser<boost::beast::http::string_body>& p);
  void dispatch();
  void reject(int status, const std::string& message);
  [[nodiscard]] bool is_active(const ExchangeImpl& exchange) const;
  [[nodiscard]] std::string status_head(int status, bool closing) const;
  void enqueue(std::string bytes, size_t payload);
  void maybe_finish();
  void on_response_written();
  void arm_timer(int seconds);
  void begin_lingering_close();
  void close();

  boost::asio::ip::tcp::socket socket_;
  ServerCore& core_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  bool header_checked_ = false;

  // The exchange being answered; requests that arrive meanwhile wait in buffer_.
  std::shared_ptr<ExchangeImpl> active_;
  bool keep_alive_ = true;
  bool chunked_ = true;
  bool head_request_ = false;

  std::deque<Piece> queue_;
  bool writing_ = false;
  bool close_after_response_ = false;
  bool input_failed_ = false;  // an error answer is on its way; ignore further input
  bool draining_ = false;      // answer sent and FIN out: discard input until EOF
  bool closed_ = false;
  bool read_paused_ = false;

  boost::asio::steady_timer timer_;         // idle timeout, then lingering close
  uint64_t timer_generation_ = 0;
  boost::asio::steady_timer resume_timer_;  // wakes a paused read loop
};

}  // namespace pagoda::http::detail
