// Errors of the OpenAI-compatible API as vLLM answers them: an HTTP status and the body
// {"error": {"message", "type", "param", "code"}}; and the guarded JSON parse every POST
// body goes through (size, nesting depth and UTF-8 are checked before anything else).
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace pagoda::server {

// Thrown by the protocol layer and turned into a response by the route handlers.
class ApiError : public Error {
 public:
  ApiError(int status, std::string message, std::string param = "");
  [[nodiscard]] int status() const { return status_; }
  [[nodiscard]] const std::string& param() const { return param_; }

 private:
  int status_;
  std::string param_;
};

[[noreturn]] void bad_request(std::string message, std::string param = "");

// "BadRequestError", "NotFoundError", ... as vLLM and the openai client name them.
[[nodiscard]] const char* error_type_for(int status);
// The error body; param is null when empty.
[[nodiscard]] std::string error_body(int status, const std::string& message, const std::string& param = "");

// Deeper documents are refused while parsing (the parser never builds them).
inline constexpr int kMaxJsonDepth = 64;

// Parses a request body that must be a JSON object. Malformed JSON, invalid UTF-8 (raw or
// as lone \u surrogates), nesting deeper than kMaxJsonDepth and non-objects are 400s.
[[nodiscard]] nlohmann::json parse_request_body(const std::string& body);

}  // namespace pagoda::server
