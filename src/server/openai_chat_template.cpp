#include "server/openai_chat_template.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/jinja_chat.h"
#include "loader/gguf.h"
#include "server/openai_errors.h"

namespace pagoda::server {
namespace {

using OJson = nlohmann::ordered_json;

ChatTemplate from_gguf(const std::string& path) {
  const auto gguf = GgufFile::open(path);
  if (!gguf->has("tokenizer.chat_template")) return ChatTemplate("", OJson::object());
  OJson special = OJson::object();
  if (gguf->has("tokenizer.ggml.tokens")) {
    const std::vector<std::string> tokens = gguf->get_string_array("tokenizer.ggml.tokens");
    // llama.cpp passes these two to chat templates.
    for (const char* key : {"bos", "eos"}) {
      const std::string id_key = std::string("tokenizer.ggml.") + key + "_token_id";
      if (!gguf->has(id_key)) continue;
      const int64_t id = gguf->get_int(id_key);
      if (id >= 0 && static_cast<uint64_t>(id) < tokens.size()) {
        special[std::string(key) + "_token"] = tokens[static_cast<size_t>(id)];
      }
    }
  }
  return ChatTemplate(gguf->get_string("tokenizer.chat_template"), std::move(special));
}

ChatTemplate from_hf_dir(const std::filesystem::path& dir) {
  const std::filesystem::path config_path = dir / "tokenizer_config.json";
  std::ifstream in(config_path, std::ios::binary);
  if (!in) return ChatTemplate("", OJson::object());
  std::stringstream text;
  text << in.rdbuf();
  OJson config;
  try {
    config = OJson::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    fail(config_path.string(), ": invalid JSON: ", e.what());
  }
  if (!config.is_object() || !config.contains("chat_template")) return ChatTemplate("", OJson::object());
  OJson special = OJson::object();
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    OJson token = special_token_from_config(config, key);
    if (!token.is_null()) special[key] = std::move(token);
  }
  return ChatTemplate(chat_template_from_config(config), std::move(special));
}

std::string strip(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

ChatTemplate ChatTemplate::from_model(const std::string& model_path) {
  if (std::filesystem::is_directory(model_path)) return from_hf_dir(model_path);
  return from_gguf(model_path);
}

ChatTemplate::ChatTemplate(std::string template_text, OJson special_tokens)
    : template_(std::move(template_text)), special_tokens_(std::move(special_tokens)) {}

std::string ChatTemplate::render(const ChatRequest& request) const {
  if (!available()) bad_request("this model has no chat template; use /v1/completions", "messages");
  OJson context = special_tokens_;
  context["messages"] = request.messages;
  context["add_generation_prompt"] = request.add_generation_prompt;
  // transformers merges the caller's kwargs over the template variables.
  for (auto it = request.template_kwargs.begin(); it != request.template_kwargs.end(); ++it) {
    context[it.key()] = it.value();
  }
  std::string prompt;
  try {
    prompt = render_chat_template(template_, context);
  } catch (const Error& e) {
    bad_request(std::string("chat template error: ") + e.what(), "messages");
  }
  if (request.continue_final_message) {
    // As transformers: cut the rendering right after the final message's (stripped) text,
    // so the model continues it instead of starting a new turn.
    const OJson& content = request.messages.back()["content"];
    const std::string final_text = content.is_string() ? strip(content.get<std::string>()) : "";
    const size_t at = final_text.empty() ? std::string::npos : prompt.rfind(final_text);
    if (at == std::string::npos) {
      bad_request("continue_final_message: the final message does not appear in the rendered chat",
                  "continue_final_message");
    }
    prompt.resize(at + final_text.size());
  }
  return prompt;
}

}  // namespace pagoda::server
