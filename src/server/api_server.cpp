#include "server/api_server.h"

#include <cstdio>

#include "server/openai_errors.h"
#include "server/openai_routes.h"

namespace pagoda::server {
namespace {

constexpr const char* kVersion = "0.1.0";

http::HttpResponse error_response(int status, const std::string& message, const std::string& param = "") {
  http::HttpResponse r{status, "application/json", error_body(status, message, param), {}};
  if (status == 401) r.headers.emplace_back("www-authenticate", "Bearer");
  return r;
}

// Comparing every byte keeps the time independent of where a guess goes wrong.
bool same_key(const std::string& given, const std::string& expected) {
  unsigned diff = given.size() == expected.size() ? 0u : 1u;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(expected[i % (expected.size() + 1)]);
  }
  return diff == 0;
}

bool authorized(const ServerContext& ctx, const http::HttpRequest& request) {
  if (!ctx.options.api_key) return true;
  const std::string* header = request.header("authorization");
  static constexpr std::string_view kBearer = "Bearer ";
  if (!header || header->compare(0, kBearer.size(), kBearer) != 0) return false;
  return same_key(header->substr(kBearer.size()), *ctx.options.api_key);
}

enum class Route { Health, Version, Metrics, Models, Completions, Chat, Tokenize, Detokenize };

struct RouteEntry {
  const char* path;
  const char* method;
  Route route;
  bool open;  // served without the API key, as vLLM does
};

constexpr RouteEntry kRoutes[] = {
    {"/health", "GET", Route::Health, true},
    {"/version", "GET", Route::Version, true},
    {"/metrics", "GET", Route::Metrics, true},
    {"/v1/models", "GET", Route::Models, false},
    {"/v1/completions", "POST", Route::Completions, false},
    {"/v1/chat/completions", "POST", Route::Chat, false},
    {"/tokenize", "POST", Route::Tokenize, false},
    {"/detokenize", "POST", Route::Detokenize, false},
};

}  // namespace

ApiServer::ApiServer(LLMEngine& engine, ApiServerOptions options)
    : context_(std::make_unique<ServerContext>(engine, std::move(options))) {}

ApiServer::~ApiServer() = default;

void ApiServer::handle(const std::shared_ptr<http::HttpExchange>& exchange) {
  ServerContext& ctx = *context_;
  const http::HttpRequest& request = exchange->request();
  const RouteEntry* entry = nullptr;
  bool path_known = false;
  for (const RouteEntry& r : kRoutes) {
    if (request.path != r.path) continue;
    path_known = true;
    if (request.method == r.method || (request.method == "HEAD" && std::string_view(r.method) == "GET")) entry = &r;
  }
  if (!entry) {
    exchange->respond(path_known ? error_response(405, "Method Not Allowed")
                                 : error_response(404, "Not Found: " + request.path));
    return;
  }
  if (!entry->open && !authorized(ctx, request)) {
    exchange->respond(error_response(401, "Unauthorized"));
    return;
  }
  try {
    switch (entry->route) {
      case Route::Health: return exchange->respond(http::HttpResponse{200, "application/json", "", {}});
      case Route::Version:
        return exchange->respond(http::HttpResponse{200, "application/json", std::string("{\"version\":\"") + kVersion + "\"}", {}});
      case Route::Metrics:
        return exchange->respond(
            http::HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", ctx.metrics.render(ctx.engine.stats()), {}});
      case Route::Models: return exchange->respond(handle_models(ctx));
      case Route::Completions: return handle_completions(ctx, exchange, parse_request_body(request.body));
      case Route::Chat: return handle_chat_completions(ctx, exchange, parse_request_body(request.body));
      case Route::Tokenize: return exchange->respond(handle_tokenize(ctx, parse_request_body(request.body)));
      case Route::Detokenize: return exchange->respond(handle_detokenize(ctx, parse_request_body(request.body)));
    }
  } catch (const ApiError& e) {
    exchange->respond(error_response(e.status(), e.what(), e.param()));
  } catch (const Error& e) {
    // Input the protocol layer let through and a lower layer refused (the tokenizer, the
    // template): still the client's request.
    exchange->respond(error_response(400, e.what(), param_named_in(e.what())));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pagoda serve: internal error on %s: %s\n", request.path.c_str(), e.what());
    exchange->respond(error_response(500, std::string("internal error: ") + e.what()));
  }
}

}  // namespace pagoda::server
