#include "server/http_connection.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>
#include <limits>

#include "server/http_wire.h"

namespace pagoda::http::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
using boost::system::error_code;

namespace {

constexpr size_t kReadChunk = 16 << 10;
// A client that pipelines more than this behind a pending answer is not read further
// (and so not watched for a disconnect) until the answer is out.
constexpr size_t kMaxBufferedBytes = 1 << 20;
constexpr int kLingerSeconds = 2;
constexpr size_t kMaxBatch = 64;
const auto kTimerNever = asio::steady_timer::time_point::max();

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void log_coroutine_exception(std::exception_ptr error) {
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "http: connection task failed: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "http: connection task failed\n");
  }
}

}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, ServerCore& core)
    : socket_(std::move(socket)), core_(core), timer_(socket_.get_executor()),
      resume_timer_(socket_.get_executor()) {}

void Connection::start() {
  error_code ec;
  socket_.non_blocking(true, ec);  // read_some after async_wait must never block
  asio::co_spawn(executor(), [self = shared_from_this()]() { return self->read_loop(); },
                 log_coroutine_exception);
}

void Connection::post_graceful_close() {
  asio::post(executor(), [self = shared_from_this()] {
    if (self->closed_) return;
    if (!self->active_) {
      self->close();
    } else {
      self->close_after_response_ = true;
    }
  });
}

void Connection::post_abort() {
  asio::post(executor(), [self = shared_from_this()] { self->close(); });
}

asio::awaitable<void> Connection::read_loop() {
  auto self = shared_from_this();  // the loop owns the connection until the socket closes
  arm_timer(core_.options.idle_timeout_s);
  while (!closed_) {
    if (buffer_.size() >= kMaxBufferedBytes) {
      read_paused_ = true;
      resume_timer_.expires_at(kTimerNever);
      co_await resume_timer_.async_wait(kTuple);
      read_paused_ = false;
      continue;
    }
    // Wait for readability first and only then take a buffer: an idle connection holds
    // no read buffer at all, and the buffer can be shrunk between reads.
    auto [wait_ec] = co_await socket_.async_wait(asio::ip::tcp::socket::wait_read, kTuple);
    error_code ec = wait_ec;
    size_t n = 0;
    if (!ec && !closed_) n = socket_.read_some(buffer_.prepare(kReadChunk), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) continue;
    if (ec || closed_) {
      // EOF, reset or our own close(): a pending exchange becomes disconnected.
      close();
      co_return;
    }
    buffer_.commit(n);
    if (draining_ || input_failed_) {
      buffer_.consume(buffer_.size());
      continue;
    }
    process_input();
    if (buffer_.size() == 0) buffer_.shrink_to_fit();
  }
}

void Connection::process_input() {
  while (!closed_ && !active_ && !input_failed_ && !draining_ && buffer_.size() > 0) {
    if (core_.stopping.load()) {
      close();
      return;
    }
    if (!parser_) {
      parser_.emplace();
      parser_->header_limit(static_cast<std::uint32_t>(
          std::min<size_t>(core_.options.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
      parser_->body_limit(core_.options.max_body_bytes);
      parser_->eager(true);
      header_checked_ = false;
    }
    error_code ec;
    const size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == beast::http::error::body_limit) {
      reject(413, "request body exceeds the limit of " +
                      std::to_string(core_.options.max_body_bytes) + " bytes");
      return;
    }
    if (ec == beast::http::error::header_limit) {
      reject(431, "request header exceeds the limit of " +
                      std::to_string(core_.options.max_header_bytes) + " bytes");
      return;
    }
    if (ec && ec != beast::http::error::need_more) {
      reject(400, "malformed HTTP request: " + ec.message());
      return;
    }
    if (parser_->is_header_done() && !check_header(*parser_)) return;
    if (parser_->is_done()) {
      dispatch();
      continue;
    }
    if (ec == beast::http::error::need_more || used == 0) return;
  }
}

// Runs once the header is in, before the body: refuses an announced oversized body at
// once and answers "Expect: 100-continue" so that clients like curl send the body.
bool Connection::check_header(
    const beast::http::request_parser<beast::http::string_body>& parser) {
  if (header_checked_ || parser.is_done()) return true;
  header_checked_ = true;
  const auto length = parser.content_length();
  if (length && *length > core_.options.max_body_bytes) {
    reject(413, "request body of " + std::to_string(*length) + " bytes exceeds the limit of " +
                    std::to_string(core_.options.max_body_bytes) + " bytes");
    return false;
  }
  const auto& request = parser.get();
  const auto expect = request[beast::http::field::expect];
  if (request.version() >= 11 && lower(expect) == "100-continue")
    enqueue("HTTP/1.1 100 Continue\r\n\r\n", 0);
  return true;
}

void Connection::dispatch() {
  auto& message = parser_->get();
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.path = request.target.substr(0, request.target.find('?'));
  for (const auto& field : message)
    request.headers.emplace_back(lower(field.name_string()), std::string(field.value()));
  request.body = std::move(message.body());
  keep_alive_ = message.keep_alive();
  chunked_ = message.version() >= 11;
  head_request_ = message.method() == beast::http::verb::head;
  parser_.reset();

  ++timer_generation_;  // no idle timeout while the answer is pending
  timer_.cancel();
  active_ = std::make_shared<ExchangeImpl>(std::move(request), weak_from_this(), core_.lifeline);
  auto exchange = active_;
  std::string failure;
  try {
    core_.handler(exchange);
    return;
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown exception";
  }
  // Posted, so that whatever the handler posted before it threw is applied first.
  asio::post(executor(), [self = shared_from_this(), exchange, failure] {
    self->handler_failed(*exchange, failure);
  });
}

void Connection::handler_failed(ExchangeImpl& exchange, const std::string& message) {
  if (!is_active(exchange)) return;
  std::fprintf(stderr, "http: handler for %s %s threw: %s\n", exchange.request().method.c_str(),
               exchange.request().target.c_str(), message.c_str());
  if (exchange.phase == ExchangeImpl::Phase::Pending) {
    HttpResponse response;
    response.status = 500;
    response.body = error_body(500, "internal server error: " + message, "server_error");
    respond(exchange, std::move(response));
  } else if (exchange.phase == ExchangeImpl::Phase::Streaming) {
    close();  // a stream cannot carry an error: cut it short
  }
}

// An error answer to input that cannot be parsed further; the connection closes after it.
void Connection::reject(int status, const std::string& message) {
  input_failed_ = true;
  close_after_response_ = true;
  parser_.reset();
  buffer_.consume(buffer_.size());
  ++timer_generation_;
  timer_.cancel();
  std::string body = error_body(status, message, "invalid_request_error");
  std::string head = status_line(status);
  append_header(head, "Content-Type", "application/json");
  append_header(head, "Content-Length", std::to_string(body.size()));
  append_header(head, "Connection", "close");
  head += "\r\n";
  head += body;
  enqueue(std::move(head), 0);
  // No exchange: begin_lingering_close() runs when the queue is written (maybe_finish).
}

bool Connection::is_active(const ExchangeImpl& exchange) const {
  return !closed_ && active_.get() == &exchange;
}

std::string Connection::status_head(int status, bool closing) const {
  std::string head = status_line(status);
  if (closing) append_header(head, "Connection", "close");
  return head;
}

void Connection::respond(ExchangeImpl& exchange, HttpResponse response) {
  if (!is_active(exchange) || exchange.phase != ExchangeImpl::Phase::Pending) return;
  if (!keep_alive_ || core_.stopping.load()) close_after_response_ = true;
  std::string head = status_head(response.status, close_after_response_);
  const bool has_body = status_has_body(response.status);
  if (has_body) {
    append_header(head, "Content-Type", response.content_type);
    append_header(head, "Content-Length", std::to_string(response.body.size()));
  }
  for (const auto& [name, value] : response.headers) append_header(head, name, value);
  head += "\r\n";
  if (has_body && !head_request_) head += response.body;
  exchange.phase = ExchangeImpl::Phase::Flushing;
  enqueue(std::move(head), 0);
}

void Connection::begin_stream(ExchangeImpl& exchange, int status, std::string content_type,
                              Headers headers) {
  if (!is_active(exchange) || exchange.phase != ExchangeImpl::Phase::Pending) return;
  // HTTP/1.0 has no chunked encoding: the body ends where the connection does.
  if (!keep_alive_ || !chunked_ || core_.stopping.load()) close_after_response_ = true;
  std::string head = status_head(status, close_after_response_);
  append_header(head, "Content-Type", content_type);
  if (chunked_) append_header(head, "Transfer-Encoding", "chunked");
  const bool has_cache_control = std::any_of(headers.begin(), headers.end(), [](const auto& h) {
    return lower(h.first) == "cache-control";
  });
  if (content_type.starts_with("text/event-stream") && !has_cache_control)
    append_header(head, "Cache-Control", "no-cache");
  for (const auto& [name, value] : headers) append_header(head, name, value);
  head += "\r\n";
  exchange.phase = ExchangeImpl::Phase::Streaming;
  enqueue(std::move(head), 0);
}

void Connection::write(ExchangeImpl& exchange, std::string data) {
  const size_t size = data.size();
  // An empty chunk would end the stream; HEAD answers carry no body.
  if (!is_active(exchange) || exchange.phase != ExchangeImpl::Phase::Streaming || size == 0 ||
      head_request_) {
    exchange.sub_pending(size);
    return;
  }
  enqueue(chunked_ ? chunk(data) : std::move(data), size);
}

void Connection::end_stream(ExchangeImpl& exchange) {
  if (!is_active(exchange) || exchange.phase != ExchangeImpl::Phase::Streaming) return;
  exchange.phase = ExchangeImpl::Phase::Flushing;
  if (chunked_ && !head_request_) {
    enqueue("0\r\n\r\n", 0);
  } else {
    maybe_finish();
  }
}

void Connection::enqueue(std::string bytes, size_t payload) {
  queue_.push_back(Piece{std::move(bytes), payload});
  if (writing_) return;
  writing_ = true;
  asio::co_spawn(executor(), [self = shared_from_this()]() { return self->write_loop(); },
                 log_coroutine_exception);
}

asio::awaitable<void> Connection::write_loop() {
  auto self = shared_from_this();
  std::vector<Piece> batch;
  std::vector<asio::const_buffer> buffers;
  while (!closed_ && !queue_.empty()) {
    batch.clear();
    buffers.clear();
    while (!queue_.empty() && batch.size() < kMaxBatch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    size_t payload = 0;
    for (const Piece& piece : batch) {
      buffers.emplace_back(asio::buffer(piece.bytes));
      payload += piece.payload;
    }
    auto exchange = active_;
    auto [ec, n] = co_await asio::async_write(socket_, buffers, kTuple);
    if (exchange) exchange->sub_pending(payload);
    if (ec) {
      close();  // a failed write is a disconnect too
      break;
    }
  }
  writing_ = false;
  maybe_finish();
}

// Called whenever the queue may have run dry: completes the answer in flight.
void Connection::maybe_finish() {
  if (closed_ || writing_ || !queue_.empty()) return;
  if (active_ && active_->phase == ExchangeImpl::Phase::Flushing) {
    on_response_written();
  } else if (!active_ && input_failed_ && !draining_) {
    begin_lingering_close();
  }
}

void Connection::on_response_written() {
  active_->mark_done();
  active_.reset();
  if (close_after_response_ || core_.stopping.load()) {
    begin_lingering_close();
    return;
  }
  arm_timer(core_.options.idle_timeout_s);
  if (read_paused_) resume_timer_.cancel();
  process_input();  // a pipelined request may be waiting
}

// One timer serves the idle timeout and the linger; a new generation disarms the old.
void Connection::arm_timer(int seconds) {
  const uint64_t generation = ++timer_generation_;
  if (seconds <= 0) return;
  timer_.expires_after(std::chrono::seconds(seconds));
  timer_.async_wait([weak = weak_from_this(), generation](error_code ec) {
    if (ec) return;
    auto self = weak.lock();
    if (self && self->timer_generation_ == generation && !self->active_) self->close();
  });
}

// Half-close and read until the client's EOF (briefly), so that input we did not read
// does not turn our FIN into a reset that could destroy the answer in the client's buffer.
void Connection::begin_lingering_close() {
  draining_ = true;
  buffer_.consume(buffer_.size());
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  if (ec || core_.stopping.load()) {
    close();
    return;
  }
  arm_timer(kLingerSeconds);
  if (read_paused_) resume_timer_.cancel();
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  error_code ec;
  socket_.close(ec);
  timer_.cancel();
  resume_timer_.cancel();
  size_t dropped = 0;
  for (const Piece& piece : queue_) dropped += piece.payload;
  queue_.clear();
  parser_.reset();
  buffer_.consume(buffer_.size());
  if (auto exchange = std::move(active_)) {
    exchange->sub_pending(dropped);
    exchange->mark_disconnected();  // runs its callback here, on the strand
  }
  core_.remove(this);
}

}  // namespace pagoda::http::detail
