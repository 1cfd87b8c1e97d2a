// The OpenAI-compatible API server (what `pagoda serve` runs): routes HTTP exchanges to the
// endpoints vLLM serves (/v1/completions, /v1/chat/completions, /v1/models, /tokenize,
// /detokenize, /health, /version, /metrics), checks the API key and admission limits, and
// turns every error into OpenAI's error body.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "server/http_server.h"
#include "server/openai_protocol.h"

namespace pagoda::server {

struct ApiServerOptions {
  std::string model_path;
  std::vector<std::string> served_model_names;  // empty: the model path; the first is reported
  std::optional<std::string> api_key;           // required as "Authorization: Bearer KEY" on /v1, /tokenize ...
  int64_t max_num_queued_requests = 0;          // 0: no limit
  int64_t max_num_queued_tokens = 0;            // 0: no limit
  ProtocolLimits limits;                        // sampling.vocab_size is filled from the model
};

struct ServerContext;

class ApiServer {
 public:
  ApiServer(LLMEngine& engine, ApiServerOptions options);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // The HttpHandler; answers every exchange (now or once generation ends).
  void handle(const std::shared_ptr<http::HttpExchange>& exchange);

 private:
  std::unique_ptr<ServerContext> context_;
};

}  // namespace pagoda::server
