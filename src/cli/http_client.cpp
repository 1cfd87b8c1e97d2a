// The benchmark client: C++20 coroutines on one io_context. Connections are kept alive
// and reused between requests (as aiohttp's pool does for vllm bench), so a long run
// does not pay a TCP handshake per request or run out of ephemeral ports.
#include "cli/http_client.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <deque>
#include <memory>

#include "core/error.h"

namespace pagoda::cli {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;

BaseUrl parse_base_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) fail("base URL must start with http:// (got '", url, "')");
  std::string rest = url.substr(scheme.size());
  BaseUrl out;
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) out.prefix = rest.substr(slash);
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  const size_t colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    out.port = authority.substr(colon + 1);
    authority.resize(colon);
  }
  if (authority.empty() || out.port.empty()) fail("bad base URL '", url, "'");
  out.host = authority;
  return out;
}

void SseSplitter::feed(std::string_view bytes, const std::function<void(std::string_view)>& on_data) {
  for (char c : bytes)
    if (c != '\r') buffer_ += c;  // CRLF and LF line ends read alike
  size_t start = 0;
  for (size_t end; (end = buffer_.find("\n\n", start)) != std::string::npos; start = end + 2) {
    std::string_view message(buffer_.data() + start, end - start);
    std::string data;
    bool has_data = false;
    while (!message.empty()) {
      const size_t nl = message.find('\n');
      std::string_view line = message.substr(0, nl);
      message = nl == std::string_view::npos ? std::string_view{} : message.substr(nl + 1);
      if (line.rfind("data:", 0) != 0) continue;  // comments (": ping"), event:, id:
      line.remove_prefix(5);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      if (has_data) data += '\n';
      data += line;
      has_data = true;
    }
    if (has_data) on_data(data);
  }
  buffer_.erase(0, start);
}

namespace {

std::string host_header(const BaseUrl& base) { return base.host + ":" + base.port; }

http::request<http::string_body> make_request(const BaseUrl& base, http::verb verb,
                                              const std::string& path, const std::string& body) {
  http::request<http::string_body> req{verb, base.prefix + path, 11};
  req.set(http::field::host, host_header(base));
  req.set(http::field::user_agent, "pagoda-bench");
  if (verb == http::verb::post) req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "*/*");
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();
  return req;
}

// Hands a slot straight to the oldest waiter on release, so no waiter starves.
class Semaphore {
 public:
  Semaphore(asio::any_io_executor ex, int slots) : ex_(std::move(ex)), available_(slots) {}
  awaitable<void> acquire() {
    if (available_ > 0) {
      --available_;
      co_return;
    }
    auto timer = std::make_shared<asio::steady_timer>(ex_, asio::steady_timer::time_point::max());
    waiters_.push_back(timer);
    auto [ec] = co_await timer->async_wait(asio::as_tuple(use_awaitable));
    (void)ec;  // cancelled by release(): the slot is ours
  }
  void release() {
    if (waiters_.empty()) {
      ++available_;
      return;
    }
    waiters_.front()->cancel();
    waiters_.pop_front();
  }

 private:
  asio::any_io_executor ex_;
  int available_;
  std::deque<std::shared_ptr<asio::steady_timer>> waiters_;
};

class Driver {
 public:
  Driver(asio::io_context& io, const BaseUrl& base) : io_(io), base_(base) {}

  awaitable<std::unique_ptr<beast::tcp_stream>> take_connection() {
    if (!idle_.empty()) {
      auto stream = std::move(idle_.back());
      idle_.pop_back();
      co_return stream;
    }
    if (endpoints_.empty()) {
      tcp::resolver resolver(io_);
      endpoints_ = co_await resolver.async_resolve(base_.host, base_.port, use_awaitable);
    }
    auto stream = std::make_unique<beast::tcp_stream>(io_);
    co_await stream->async_connect(endpoints_, use_awaitable);
    stream->socket().set_option(tcp::no_delay(true));
    co_return stream;
  }

  // One streaming POST; events go to on_event as they are parsed.
  awaitable<void> stream_one(size_t index, const LoadPlan& plan, StreamResult& result) {
    result.sent = Clock::now();
    try {
      // A kept-alive connection the server has closed fails on first use: retry once fresh.
      for (int attempt = 0;; ++attempt) {
        const bool reused = !idle_.empty();
        auto stream = co_await take_connection();
        try {
          if (co_await read_stream(*stream, index, plan, result)) idle_.push_back(std::move(stream));
          co_return;
        } catch (const boost::system::system_error&) {
          if (!reused || attempt > 0 || result.status != 0) throw;
        }
      }
    } catch (const std::exception& e) {
      result.error = e.what();
    }
    result.done = Clock::now();
  }

  // True when the connection may be reused.
  awaitable<bool> read_stream(beast::tcp_stream& stream, size_t index, const LoadPlan& plan,
                              StreamResult& result) {
    auto req = make_request(base_, http::verb::post, plan.path, plan.bodies[index]);
    stream.expires_never();
    co_await http::async_write(stream, req, use_awaitable);
    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    co_await http::async_read_header(stream, buffer, parser, use_awaitable);
    result.status = static_cast<int>(parser.get().result_int());
    SseSplitter sse;
    char chunk[16384];
    while (!parser.is_done()) {
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof chunk;
      // read_some, not read: read would wait until the 16 KiB buffer is full or the body ends,
      // so every chunk of a short stream would get the same (last) timestamp.
      auto [ec, n] = co_await http::async_read_some(stream, buffer, parser, asio::as_tuple(use_awaitable));
      (void)n;
      if (ec == http::error::need_buffer) ec = {};
      if (ec) throw boost::system::system_error(ec);
      const std::string_view got(chunk, sizeof chunk - parser.get().body().size);
      if (result.status != 200) {
        result.body.append(got);
        continue;
      }
      const auto now = Clock::now();
      sse.feed(got, [&](std::string_view data) { plan.on_event(index, data, now); });
    }
    result.done = Clock::now();
    if (result.status != 200) result.error = "HTTP " + std::to_string(result.status);
    co_return parser.get().keep_alive();
  }

 private:
  asio::io_context& io_;
  BaseUrl base_;
  tcp::resolver::results_type endpoints_;
  std::vector<std::unique_ptr<beast::tcp_stream>> idle_;
};

awaitable<void> limited(Driver& driver, Semaphore& slots, size_t index, const LoadPlan& plan,
                        StreamResult& result) {
  co_await slots.acquire();
  co_await driver.stream_one(index, plan, result);
  slots.release();
}

awaitable<void> schedule(asio::io_context& io, Driver& driver, Semaphore& slots, const LoadPlan& plan,
                         std::vector<StreamResult>& results) {
  const auto start = Clock::now();
  asio::steady_timer timer(io);
  for (size_t i = 0; i < plan.bodies.size(); ++i) {
    const double at = i < plan.send_at_s.size() ? plan.send_at_s[i] : 0.0;
    if (at > 0) {
      timer.expires_at(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(at)));
      co_await timer.async_wait(use_awaitable);
    }
    asio::co_spawn(io, limited(driver, slots, i, plan, results[i]), asio::detached);
  }
}

}  // namespace

std::vector<StreamResult> run_stream_load(const BaseUrl& base, const LoadPlan& plan) {
  asio::io_context io;
  Driver driver(io, base);
  const int slots = plan.max_concurrency > 0 ? plan.max_concurrency : static_cast<int>(plan.bodies.size()) + 1;
  Semaphore semaphore(io.get_executor(), slots);
  std::vector<StreamResult> results(plan.bodies.size());
  asio::co_spawn(io, schedule(io, driver, semaphore, plan, results), asio::detached);
  io.run();
  return results;
}

HttpReply http_request(const BaseUrl& base, const std::string& method, const std::string& path,
                       const std::string& body, double timeout_s) {
  asio::io_context io;
  HttpReply reply;
  auto run = [&]() -> awaitable<void> {
    try {
      tcp::resolver resolver(io);
      const auto endpoints = co_await resolver.async_resolve(base.host, base.port, use_awaitable);
      beast::tcp_stream stream(io);
      stream.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(timeout_s)));
      co_await stream.async_connect(endpoints, use_awaitable);
      auto req = make_request(base, http::string_to_verb(method), path, body);
      req.keep_alive(false);
      co_await http::async_write(stream, req, use_awaitable);
      beast::flat_buffer buffer;
      http::response<http::string_body> res;
      co_await http::async_read(stream, buffer, res, use_awaitable);
      reply.status = static_cast<int>(res.result_int());
      reply.body = std::move(res.body());
    } catch (const std::exception& e) {
      reply.error = e.what();
    }
  };
  asio::co_spawn(io, run(), asio::detached);
  io.run();
  return reply;
}

}  // namespace pagoda::cli
