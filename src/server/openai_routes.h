// The endpoint handlers behind ApiServer's router, and the state they share. Each takes
// the parsed body and either returns the whole response or starts a Generation that
// answers the exchange later; errors are thrown as ApiError.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/llm_engine.h"
#include "server/admission_control.h"
#include "server/api_server.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/openai_chat_template.h"

namespace pagoda::server {

struct ServerContext {
  ServerContext(LLMEngine& e, ApiServerOptions o);

  LLMEngine& engine;
  ApiServerOptions options;
  ChatTemplate chat_template;
  ServerMetrics metrics;
  // Shared with the generations in flight, which may outlive a handler call.
  std::shared_ptr<AdmissionControl> admission;
  int64_t created;  // when the server started (the models list's `created`)

  [[nodiscard]] const std::string& served_name() const { return options.served_model_names.front(); }
  // Throws ApiError(404) when a request names a model this server does not serve.
  void check_model(const std::optional<std::string>& model) const;
};

void handle_completions(ServerContext& ctx, const std::shared_ptr<http::HttpExchange>& exchange,
                        const nlohmann::json& body);
void handle_chat_completions(ServerContext& ctx, const std::shared_ptr<http::HttpExchange>& exchange,
                             const nlohmann::json& body);
[[nodiscard]] http::HttpResponse handle_models(const ServerContext& ctx);
[[nodiscard]] http::HttpResponse handle_tokenize(const ServerContext& ctx, const nlohmann::json& body);
[[nodiscard]] http::HttpResponse handle_detokenize(const ServerContext& ctx, const nlohmann::json& body);

}  // namespace pagoda::server
