// The request side of the OpenAI API as vLLM accepts it: JSON bodies of /v1/completions and
// /v1/chat/completions (and /tokenize, /detokenize) checked field by field and mapped onto
// SamplingParams. Unknown fields are ignored; a field of the wrong type or out of range is
// an ApiError (400) naming it. Range checks that SamplingParams::validate owns stay there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sample/sampling_params.h"

namespace pagoda::server {

// Per-request caps of the protocol layer (the sampling caps live in SamplingLimits).
struct ProtocolLimits {
  size_t max_messages = 1000;
  size_t max_prompts = 1000;      // entries of a batched completions prompt
  size_t max_prompt_ids = 1 << 20;  // ids in one token prompt
  SamplingLimits sampling;        // for the checks done before the engine sees the request
};

// One completions prompt: text to tokenize, or token ids as given.
struct PromptInput {
  std::optional<std::string> text;
  std::vector<int32_t> ids;
};

// The fields both endpoints share.
struct GenerationRequest {
  std::optional<std::string> model;
  SamplingParams params;
  bool max_tokens_given = false;  // else the engine fills the context (chat) or 16 (completions)
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  bool add_special_tokens = true;
  int priority = 0;
};

struct CompletionRequest : GenerationRequest {
  std::vector<PromptInput> prompts;
  bool echo = false;
};

struct ChatRequest : GenerationRequest {
  nlohmann::ordered_json messages;   // normalized: content is a string (text parts joined)
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
  bool add_generation_prompt = true;
  bool continue_final_message = false;
  bool logprobs = false;
  int top_logprobs = 0;
};

[[nodiscard]] CompletionRequest parse_completion_request(const nlohmann::json& body, const ProtocolLimits& limits);
[[nodiscard]] ChatRequest parse_chat_request(const nlohmann::json& body, const ProtocolLimits& limits);

// POST /tokenize: either a prompt or chat messages (vLLM's TokenizeRequest).
struct TokenizeRequest {
  std::optional<std::string> model;
  std::optional<std::string> prompt;
  std::optional<ChatRequest> chat;  // when messages were sent
  bool add_special_tokens = true;
  bool return_token_strs = false;
};
[[nodiscard]] TokenizeRequest parse_tokenize_request(const nlohmann::json& body, const ProtocolLimits& limits);

struct DetokenizeRequest {
  std::optional<std::string> model;
  std::vector<int32_t> tokens;
};
[[nodiscard]] DetokenizeRequest parse_detokenize_request(const nlohmann::json& body, const ProtocolLimits& limits);

// The request field an engine validation message is about (its first word that names a
// field), or "" when none does: lets a 400 from SamplingParams::validate carry `param`.
[[nodiscard]] std::string param_named_in(const std::string& message);

}  // namespace pagoda::server
