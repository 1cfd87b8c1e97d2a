#include "server/openai_protocol.h"

#include <array>
#include <string_view>

#include "server/openai_errors.h"
#include "server/openai_fields.h"

namespace pagoda::server {
namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

// The fields both endpoints map onto SamplingParams, as vLLM's protocol does.
void parse_sampling(const FieldReader& f, const ProtocolLimits& limits, GenerationRequest& r) {
  SamplingParams& p = r.params;
  r.model = f.string("model");
  if (auto v = f.integer32("n")) p.n = *v;
  if (auto v = f.number_f("temperature")) p.temperature = *v;
  if (auto v = f.number_f("top_p")) p.top_p = *v;
  if (auto v = f.integer32("top_k")) p.top_k = *v;
  if (auto v = f.number_f("min_p")) p.min_p = *v;
  if (auto v = f.number_f("presence_penalty")) p.presence_penalty = *v;
  if (auto v = f.number_f("frequency_penalty")) p.frequency_penalty = *v;
  if (auto v = f.number_f("repetition_penalty")) p.repetition_penalty = *v;
  if (auto v = f.integer("seed"); v && *v != -1) p.seed = *v;  // vLLM: -1 means none
  p.stop = f.strings("stop", limits.sampling.max_stop);
  if (auto v = f.token_ids("stop_token_ids", limits.sampling.max_stop_token_ids)) p.stop_token_ids = *v;
  if (auto v = f.integer("min_tokens")) p.min_tokens = *v;
  if (auto v = f.boolean("ignore_eos")) p.ignore_eos = *v;
  if (auto v = f.boolean("skip_special_tokens")) p.skip_special_tokens = *v;
  if (auto v = f.boolean("spaces_between_special_tokens")) p.spaces_between_special_tokens = *v;
  if (auto v = f.boolean("include_stop_str_in_output")) p.include_stop_str_in_output = *v;
  p.bad_words = f.strings("bad_words", limits.sampling.max_bad_words);
  if (auto v = f.token_ids("allowed_token_ids", static_cast<size_t>(limits.sampling.vocab_size) + 1)) {
    p.allowed_token_ids = *v;
  }
  if (const Json* bias = f.get("logit_bias")) {
    if (!bias->is_object()) bad_request("logit_bias must be an object of token id -> bias", "logit_bias");
    if (bias->size() > limits.sampling.max_logit_bias) {
      bad_request("logit_bias must contain at most " + std::to_string(limits.sampling.max_logit_bias) + " entries",
                  "logit_bias");
    }
    for (auto it = bias->begin(); it != bias->end(); ++it) {
      const std::string& key = it.key();
      size_t used = 0;
      long long id = -1;
      try {
        id = std::stoll(key, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != key.size() || id < 0 || id > INT32_MAX) {
        bad_request("logit_bias keys must be token ids, got '" + key + "'", "logit_bias");
      }
      if (!it.value().is_number()) bad_request("logit_bias values must be numbers", "logit_bias");
      const float b = static_cast<float>(it.value().get<double>());
      p.logit_bias[static_cast<int32_t>(id)] = std::clamp(b, -kMaxLogitBias, kMaxLogitBias);
    }
  }
  if (auto v = f.integer32("prompt_logprobs")) p.prompt_logprobs = *v;
  if (auto v = f.integer32("priority")) r.priority = *v;
  if (auto v = f.boolean("stream")) r.stream = *v;
  if (const Json* so = f.get("stream_options")) {
    if (!so->is_object()) bad_request("stream_options must be an object", "stream_options");
    if (!r.stream) bad_request("Stream options can only be defined when `stream=True`.", "stream_options");
    if (auto v = FieldReader(*so).boolean("include_usage")) r.include_usage = *v;
  }
  // vLLM's rule: prompt logprobs go only in a whole response (0 asks for none).
  if (r.stream && p.prompt_logprobs && (*p.prompt_logprobs > 0 || *p.prompt_logprobs == -1)) {
    bad_request("`prompt_logprobs` are not available when `stream=True`.", "prompt_logprobs");
  }
}

void parse_max_tokens(const FieldReader& f, const char* name, GenerationRequest& r) {
  if (auto v = f.integer(name)) {
    r.params.max_tokens = *v;
    r.max_tokens_given = true;
  }
}

PromptInput text_prompt(const Json& v) { return PromptInput{v.get<std::string>(), {}}; }

std::vector<PromptInput> parse_prompts(const Json* prompt, const ProtocolLimits& limits) {
  if (!prompt) bad_request("prompt is required", "prompt");
  if (prompt->is_string()) return {text_prompt(*prompt)};
  if (!prompt->is_array()) bad_request("prompt must be a string, a list of strings or token ids", "prompt");
  if (prompt->empty()) bad_request("prompt must not be empty", "prompt");
  const Json& first = prompt->front();
  if (first.is_number()) return {PromptInput{std::nullopt, token_id_list(*prompt, "prompt", limits.max_prompt_ids)}};
  if (prompt->size() > limits.max_prompts) {
    bad_request("prompt must contain at most " + std::to_string(limits.max_prompts) + " prompts", "prompt");
  }
  std::vector<PromptInput> out;
  for (const Json& p : *prompt) {
    if (first.is_string() && p.is_string()) {
      out.push_back(text_prompt(p));
    } else if (first.is_array() && p.is_array()) {
      if (p.empty()) bad_request("prompt must not contain an empty list of token ids", "prompt");
      out.push_back(PromptInput{std::nullopt, token_id_list(p, "prompt", limits.max_prompt_ids)});
    } else {
      bad_request("prompt must be a string, a list of strings, a list of token ids or a list of lists of token ids",
                  "prompt");
    }
  }
  return out;
}

constexpr std::array<std::string_view, 5> kRoles = {"system", "user", "assistant", "tool", "developer"};

// vLLM joins the text parts of a message with newlines; other part types need a
// multimodal model.
std::string content_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) bad_request("message content must be a string or a list of content parts", "messages");
  std::string text;
  bool first = true;
  for (const Json& part : content) {
    if (!part.is_object()) bad_request("content parts must be objects", "messages");
    const auto type = part.find("type");
    if (type == part.end() || !type->is_string()) bad_request("content parts need a string `type`", "messages");
    if (*type != "text") {
      bad_request("content part type '" + type->get<std::string>() + "' is not supported by this model", "messages");
    }
    const auto t = part.find("text");
    if (t == part.end() || !t->is_string()) bad_request("text content parts need a string `text`", "messages");
    if (!first) text += '\n';
    text += t->get<std::string>();
    first = false;
  }
  return text;
}

OJson parse_messages(const Json* messages, const ProtocolLimits& limits) {
  if (!messages) bad_request("messages is required", "messages");
  if (!messages->is_array()) bad_request("messages must be a list of messages", "messages");
  if (messages->empty()) bad_request("messages must not be empty", "messages");
  if (messages->size() > limits.max_messages) {
    bad_request("messages must contain at most " + std::to_string(limits.max_messages) + " messages", "messages");
  }
  OJson out = OJson::array();
  for (const Json& m : *messages) {
    if (!m.is_object()) bad_request("each message must be an object", "messages");
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string()) bad_request("each message needs a string `role`", "messages");
    const std::string r = role->get<std::string>();
    if (std::find(kRoles.begin(), kRoles.end(), r) == kRoles.end()) {
      bad_request("unknown message role '" + r + "'", "messages");
    }
    OJson msg = OJson::object();
    msg["role"] = r;
    const auto content = m.find("content");
    if (content != m.end() && !content->is_null()) {
      msg["content"] = content_text(*content);
    } else if (r == "assistant") {
      msg["content"] = nullptr;  // an assistant turn may carry only tool calls
    } else {
      bad_request("a " + r + " message needs `content`", "messages");
    }
    for (const char* key : {"name", "tool_call_id", "tool_calls", "reasoning_content"}) {
      if (auto it = m.find(key); it != m.end()) msg[key] = *it;
    }
    out.push_back(std::move(msg));
  }
  return out;
}

void parse_chat_fields(const FieldReader& f, const ProtocolLimits& limits, ChatRequest& r) {
  r.messages = parse_messages(f.get("messages"), limits);
  r.add_special_tokens = f.boolean("add_special_tokens").value_or(false);
  r.add_generation_prompt = f.boolean("add_generation_prompt").value_or(true);
  r.continue_final_message = f.boolean("continue_final_message").value_or(false);
  if (r.add_generation_prompt && r.continue_final_message && f.get("add_generation_prompt")) {
    bad_request("Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
                "continue_final_message");
  }
  if (r.continue_final_message) r.add_generation_prompt = false;
  if (r.continue_final_message && r.messages.back()["role"] != "assistant") {
    bad_request("continue_final_message needs a final assistant message", "continue_final_message");
  }
  if (const Json* kw = f.get("chat_template_kwargs")) {
    if (!kw->is_object()) bad_request("chat_template_kwargs must be an object", "chat_template_kwargs");
    r.template_kwargs = OJson::parse(kw->dump());
  }
}

}  // namespace

CompletionRequest parse_completion_request(const Json& body, const ProtocolLimits& limits) {
  const FieldReader f(body);
  CompletionRequest r;
  parse_sampling(f, limits, r);
  parse_max_tokens(f, "max_tokens", r);
  r.prompts = parse_prompts(f.get("prompt"), limits);
  r.echo = f.boolean("echo").value_or(false);
  r.add_special_tokens = f.boolean("add_special_tokens").value_or(true);
  if (auto v = f.integer32("logprobs")) {
    if (*v < 0) bad_request("logprobs must be non-negative, got " + std::to_string(*v), "logprobs");
    r.params.logprobs = *v;
  }
  if (r.echo && r.params.logprobs && !r.params.prompt_logprobs) {
    // OpenAI returns the prompt's logprobs then; that needs prompt_logprobs from the engine
    // (as many as logprobs, unless the request says how many, as in vLLM).
    r.params.prompt_logprobs = r.params.logprobs;
  }
  return r;
}

ChatRequest parse_chat_request(const Json& body, const ProtocolLimits& limits) {
  const FieldReader f(body);
  ChatRequest r;
  parse_sampling(f, limits, r);
  r.params.max_tokens.reset();  // chat's default: whatever the context leaves
  parse_max_tokens(f, "max_tokens", r);
  parse_max_tokens(f, "max_completion_tokens", r);
  parse_chat_fields(f, limits, r);
  r.logprobs = f.boolean("logprobs").value_or(false);
  if (auto v = f.integer32("top_logprobs")) {
    if (!r.logprobs) bad_request("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");
    if (*v < 0) bad_request("top_logprobs must be non-negative, got " + std::to_string(*v), "top_logprobs");
    r.top_logprobs = *v;
  }
  if (r.logprobs) r.params.logprobs = r.top_logprobs;
  return r;
}

TokenizeRequest parse_tokenize_request(const Json& body, const ProtocolLimits& limits) {
  const FieldReader f(body);
  TokenizeRequest r;
  r.model = f.string("model");
  r.return_token_strs = f.boolean("return_token_strs").value_or(false);
  if (f.get("messages")) {
    ChatRequest chat;
    parse_chat_fields(f, limits, chat);
    r.add_special_tokens = chat.add_special_tokens;
    r.chat = std::move(chat);
  } else {
    r.prompt = f.string("prompt");
    if (!r.prompt) bad_request("prompt or messages is required", "prompt");
    r.add_special_tokens = f.boolean("add_special_tokens").value_or(true);
  }
  return r;
}

DetokenizeRequest parse_detokenize_request(const Json& body, const ProtocolLimits& limits) {
  const FieldReader f(body);
  DetokenizeRequest r;
  r.model = f.string("model");
  auto tokens = f.token_ids("tokens", limits.max_prompt_ids);
  if (!tokens) bad_request("tokens is required", "tokens");
  r.tokens = std::move(*tokens);
  return r;
}

std::string param_named_in(const std::string& message) {
  static constexpr std::array<std::string_view, 22> kFields = {
      "n", "presence_penalty", "frequency_penalty", "repetition_penalty", "temperature", "top_p", "top_k",
      "min_p", "max_tokens", "min_tokens", "logprobs", "prompt_logprobs", "stop", "stop_token_ids",
      "logit_bias", "allowed_token_ids", "bad_words", "seed", "prompt", "messages", "priority", "model"};
  size_t i = 0;
  while (i < message.size()) {
    size_t j = i;
    while (j < message.size() && (std::isalnum(static_cast<unsigned char>(message[j])) || message[j] == '_')) ++j;
    const std::string_view word(message.data() + i, j - i);
    for (std::string_view field : kFields) {
      if (word == field) return std::string(field);
    }
    i = j + 1;
  }
  return "";
}

}  // namespace pagoda::server
