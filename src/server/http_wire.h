// The bytes of HTTP/1.1 answers that the connection writes itself: status lines and
// headers, chunk framing, and the OpenAI-shaped JSON error body of its own errors.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagoda::http::detail {

// {"error":{"message":...,"type":...,"param":null,"code":status}}
[[nodiscard]] std::string error_body(int status, std::string_view message, std::string_view type);

// "HTTP/1.1 200 OK\r\n"; statuses outside 100..599 become 500.
[[nodiscard]] std::string status_line(int status);

// Appends "Name: value\r\n", dropping fields whose name or value could split the head.
void append_header(std::string& head, std::string_view name, std::string_view value);

// 1xx, 204 and 304 answers carry no body (and no Content-Length).
[[nodiscard]] bool status_has_body(int status);

// One chunk of a chunked body: size in hex, CRLF, data, CRLF.
[[nodiscard]] std::string chunk(std::string_view data);

}  // namespace pagoda::http::detail
