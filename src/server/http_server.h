// The HTTP/1.1 front door: an asynchronous server (Boost.Beast on Asio, C++20 coroutines)
// that holds thousands of idle or streaming connections on a few threads. It knows
// nothing about OpenAI or the engine: a handler gets each request as an HttpExchange and
// answers it, at once or later, whole or as a stream, from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pagoda::http {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, as sent ("/v1/models?x=1")
  std::string path;    // target without the query
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  // The first header with this (lower-case) name, or nullptr.
  [[nodiscard]] const std::string* header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

// One request and its answer. Every method is thread-safe and may be called from any
// thread (the engine's listener, a worker): work is posted to the connection's strand.
// Calls after the exchange ended, or after the client went away, are ignored.
class HttpExchange {
 public:
  virtual ~HttpExchange() = default;
  [[nodiscard]] virtual const HttpRequest& request() const = 0;

  // A whole response; ends the exchange.
  virtual void respond(HttpResponse response) = 0;
  // A streamed response (chunked transfer encoding): the head, then any number of
  // writes, then end_stream(). Writes are sent in order; the queue is unbounded, so a
  // producer that can outrun the client should check pending_bytes().
  virtual void begin_stream(int status, std::string content_type,
                            std::vector<std::pair<std::string, std::string>> headers = {}) = 0;
  virtual void write(std::string data) = 0;
  virtual void end_stream() = 0;
  [[nodiscard]] virtual size_t pending_bytes() const = 0;

  // Runs once, on the connection's strand, if the client goes away before the exchange
  // ends (while a response is pending or streaming); at once if it has already gone.
  virtual void on_disconnect(std::function<void()> callback) = 0;
  [[nodiscard]] virtual bool disconnected() const = 0;
};

using HttpHandler = std::function<void(std::shared_ptr<HttpExchange>)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                        // 0: any free port (see HttpServer::port)
  int num_threads = 2;                    // I/O threads
  size_t max_body_bytes = 32u << 20;      // larger bodies get 413
  size_t max_header_bytes = 64u << 10;    // larger headers get 431
  int max_connections = 16384;            // further connections are closed at once
  int idle_timeout_s = 600;               // keep-alive connections idle this long are closed
};

class HttpServer {
 public:
  // Binds and listens; throws pagoda::Error when the address cannot be bound.
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  [[nodiscard]] int port() const;  // the bound port
  // Serves on the I/O threads until stop(); returns after they have joined.
  void run();
  // Thread-safe and async-signal-free to call from a signal-watching thread: stops
  // accepting, lets in-flight exchanges finish for up to grace_s seconds, then closes the
  // rest (their on_disconnect callbacks run) and makes run() return.
  void stop(double grace_s = 5.0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pagoda::http
