// A small HTTP/1.1 client for the benchmark commands (Boost.Beast on one Asio thread,
// hidden behind this header): one-shot requests, and a load driver that sends many
// streaming POSTs on a schedule and hands every Server-Sent Event to a callback.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pagoda::cli {

using Clock = std::chrono::steady_clock;

// http://host[:port][/prefix]; https is not supported.
struct BaseUrl {
  std::string host;
  std::string port = "80";
  std::string prefix;  // "" or "/something", no trailing slash
};
[[nodiscard]] BaseUrl parse_base_url(const std::string& url);

struct HttpReply {
  int status = 0;     // 0: no response (the error says why)
  std::string body;
  std::string error;  // transport error, empty when a response came
};

// One request on a fresh connection, waiting at most timeout_s.
[[nodiscard]] HttpReply http_request(const BaseUrl& base, const std::string& method,
                                     const std::string& path, const std::string& body,
                                     double timeout_s = 60);

struct StreamResult {
  int status = 0;          // HTTP status; 0 when none came
  std::string error;       // empty on a complete 200 stream
  std::string body;        // the body of a non-200 answer
  Clock::time_point sent;  // when the request went out (after its concurrency slot)
  Clock::time_point done;  // when the stream ended
};

struct LoadPlan {
  std::string path;                // e.g. /v1/completions
  std::vector<std::string> bodies; // one JSON body per request
  std::vector<double> send_at_s;   // offset from the start at which each request is due
  int max_concurrency = 0;         // 0: no limit
  // Runs on the I/O thread for every `data:` payload, as soon as it is parsed.
  std::function<void(size_t request, std::string_view data, Clock::time_point at)> on_event;
};

// Runs the plan to completion and returns one result per request, in plan order.
[[nodiscard]] std::vector<StreamResult> run_stream_load(const BaseUrl& base, const LoadPlan& plan);

// Splits a byte stream into SSE messages (separated by a blank line) and yields each
// `data:` field's value; comments and other fields are skipped.
class SseSplitter {
 public:
  void feed(std::string_view bytes, const std::function<void(std::string_view data)>& on_data);

 private:
  std::string buffer_;
};

}  // namespace pagoda::cli
