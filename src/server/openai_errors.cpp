#include "server/openai_errors.h"

namespace pagoda::server {

ApiError::ApiError(int status, std::string message, std::string param)
    : Error(std::move(message)), status_(status), param_(std::move(param)) {}

void bad_request(std::string message, std::string param) {
  throw ApiError(400, std::move(message), std::move(param));
}

const char* error_type_for(int status) {
  switch (status) {
    case 400: return "BadRequestError";
    case 401: return "AuthenticationError";
    case 404: return "NotFoundError";
    case 405: return "MethodNotAllowedError";
    case 413: return "RequestEntityTooLargeError";
    case 429: return "RateLimitError";
    case 503: return "ServiceUnavailableError";
    default: return status >= 500 ? "InternalServerError" : "BadRequestError";
  }
}

std::string error_body(int status, const std::string& message, const std::string& param) {
  nlohmann::json error = {{"message", message}, {"type", error_type_for(status)}, {"code", status}};
  error["param"] = param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param);
  // Bytes that are not UTF-8 (a message quoting bad input) become U+FFFD instead of throwing.
  return nlohmann::json{{"error", error}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json parse_request_body(const std::string& body) {
  using Json = nlohmann::json;
  bool too_deep = false;
  // The callback sees every value as it is parsed; refusing at the opening bracket keeps
  // hostile nesting from ever being built.
  const Json::parser_callback_t limit_depth = [&](int depth, Json::parse_event_t event, Json&) {
    if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth) {
      too_deep = true;
      throw ApiError(400, "JSON nesting is deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    return true;
  };
  Json value;
  try {
    value = Json::parse(body, limit_depth);
  } catch (const ApiError&) {
    throw;
  } catch (const Json::parse_error& e) {
    // nlohmann checks UTF-8 (and \u surrogate pairs) inside strings as it lexes them.
    bad_request(std::string("Invalid JSON body: ") + e.what());
  }
  if (too_deep) bad_request("JSON nesting is too deep");
  if (!value.is_object()) bad_request("The request body must be a JSON object");
  return value;
}

}  // namespace pagoda::server
