#include "server/http_wire.h"

#include <boost/beast/http/status.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace pagoda::http::detail {

std::string error_body(int status, std::string_view message, std::string_view type) {
  nlohmann::json body = {{"error",
                          {{"message", message},
                           {"type", type},
                           {"param", nullptr},
                           {"code", status}}}};
  // Replace rather than throw on invalid UTF-8 in a message that quotes the client.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string status_line(int status) {
  if (status < 100 || status > 599) status = 500;
  auto reason = boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
  if (reason == "<unknown-status>") reason = "Unknown";
  std::string line = "HTTP/1.1 " + std::to_string(status) + " ";
  line.append(reason.data(), reason.size());
  line += "\r\n";
  return line;
}

void append_header(std::string& head, std::string_view name, std::string_view value) {
  auto unsafe = [](std::string_view s) {
    return s.find_first_of("\r\n") != std::string_view::npos || s.find('\0') != std::string_view::npos;
  };
  if (name.empty() || unsafe(name) || unsafe(value) || name.find(':') != std::string_view::npos) {
    std::fprintf(stderr, "http: dropped a response header with an invalid name or value\n");
    return;
  }
  head.append(name);
  head += ": ";
  head.append(value);
  head += "\r\n";
}

bool status_has_body(int status) {
  return !(status < 200 || status == 204 || status == 304);
}

std::string chunk(std::string_view data) {
  char size[24];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out;
  out.reserve(static_cast<size_t>(n) + data.size() + 2);
  out.append(size, static_cast<size_t>(n));
  out.append(data);
  out += "\r\n";
  return out;
}

}  // namespace pagoda::http::detail
