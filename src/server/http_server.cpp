#include "server/http_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>

#include "core/error.h"
#include "server/http_connection.h"
#include "server/http_server_core.h"

namespace pagoda::http {

const std::string* HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return &value;
  return nullptr;
}

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

// After the grace period, connections get this long to run their callbacks and close
// before the io_context is stopped outright.
constexpr auto kHardStopDelay = std::chrono::seconds(2);

tcp::endpoint resolve(const std::string& host, int port) {
  if (port < 0 || port > 65535) fail("http: port ", port, " is out of range");
  error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) return {address, static_cast<unsigned short>(port)};
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  const auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty()) fail("http: cannot resolve host '", host, "': ", ec.message());
  return results.begin()->endpoint();
}

}  // namespace

struct HttpServer::Impl {
  Impl(HttpServerOptions options, HttpHandler handler)
      : core(std::move(options), std::move(handler)) {}

  detail::ServerCore core;  // declared first: connections may reach it while ioc dies
  asio::io_context ioc;
  asio::strand<asio::io_context::executor_type> strand = asio::make_strand(ioc);
  tcp::acceptor acceptor{strand};
  asio::steady_timer grace_timer{strand};
  asio::steady_timer hard_stop_timer{strand};
  int port = 0;

  asio::awaitable<void> accept_loop();
  void begin_stop(double grace_s);
  void run_io();
};

asio::awaitable<void> HttpServer::Impl::accept_loop() {
  asio::steady_timer backoff(strand);
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(ioc),
                                                       asio::as_tuple(asio::use_awaitable));
    if (core.stopping.load() || !acceptor.is_open()) co_return;
    if (ec) {
      // Out of file descriptors, most likely: wait for some to free up instead of spinning.
      std::fprintf(stderr, "http: accept failed: %s\n", ec.message().c_str());
      backoff.expires_after(std::chrono::milliseconds(50));
      co_await backoff.async_wait(asio::as_tuple(asio::use_awaitable));
      continue;
    }
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);  // tokens go out as they come
    auto connection = std::make_shared<detail::Connection>(std::move(socket), core);
    if (!core.add(connection)) continue;  // max_connections: the socket closes with it
    connection->start();
  }
}

void HttpServer::Impl::begin_stop(double grace_s) {
  error_code ignored;
  acceptor.close(ignored);
  const auto connections = core.snapshot();
  for (const auto& connection : connections) connection->post_graceful_close();
  if (core.size() == 0) return;
  const auto grace = std::chrono::duration_cast<asio::steady_timer::duration>(
      std::chrono::duration<double>(std::max(0.0, grace_s)));
  grace_timer.expires_after(grace);
  grace_timer.async_wait([this](error_code ec) {
    // Drained already (its cancel may have come just before this handler ran).
    if (ec || core.size() == 0) return;
    for (const auto& connection : core.snapshot()) connection->post_abort();
    hard_stop_timer.expires_after(kHardStopDelay);
    hard_stop_timer.async_wait([this](error_code ec2) {
      if (ec2) return;
      std::fprintf(stderr, "http: connections did not close in time; stopping anyway\n");
      ioc.stop();
    });
  });
}

void HttpServer::Impl::run_io() {
  for (;;) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "http: I/O thread caught: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "http: I/O thread caught an unknown exception\n");
    }
  }
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {
  const auto& opts = impl_->core.options;
  const tcp::endpoint endpoint = resolve(opts.host, opts.port);
  error_code ec;
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) fail("http: cannot listen on ", opts.host, ":", opts.port, ": ", ec.message());
  impl_->port = acceptor.local_endpoint().port();
  // When the last connection closes during stop(), nothing is left to wait for.
  impl_->core.on_drained = [impl = impl_.get()] {
    asio::post(impl->strand, [impl] {
      impl->grace_timer.cancel();
      impl->hard_stop_timer.cancel();
    });
  };
}

HttpServer::~HttpServer() {
  std::unique_lock lock(impl_->core.lifeline->mutex);
  impl_->core.lifeline->alive = false;
}

int HttpServer::port() const { return impl_->port; }

void HttpServer::run() {
  asio::co_spawn(impl_->strand, impl_->accept_loop(), [](std::exception_ptr error) {
    if (!error) return;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "http: accept loop failed: %s\n", e.what());
    } catch (...) {
    }
  });
  std::vector<std::thread> threads;
  const int extra = std::max(1, impl_->core.options.num_threads) - 1;
  threads.reserve(static_cast<size_t>(extra));
  for (int i = 0; i < extra; ++i) threads.emplace_back([this] { impl_->run_io(); });
  impl_->run_io();
  for (auto& thread : threads) thread.join();
}

void HttpServer::stop(double grace_s) {
  if (impl_->core.stopping.exchange(true)) return;
  asio::post(impl_->strand, [impl = impl_.get(), grace_s] { impl->begin_stop(grace_s); });
}

}  // namespace pagoda::http
