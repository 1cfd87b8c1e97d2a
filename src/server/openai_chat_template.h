// The model's own chat template for /v1/chat/completions and /tokenize: found where
// `pagoda template` finds it (GGUF tokenizer.chat_template, or the Hugging Face directory's
// tokenizer_config.json) and rendered as transformers' apply_chat_template does.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "server/openai_protocol.h"

namespace pagoda::server {

class ChatTemplate {
 public:
  // A model without a template loads too; rendering then is a 400.
  static ChatTemplate from_model(const std::string& model_path);
  ChatTemplate(std::string template_text, nlohmann::ordered_json special_tokens);

  [[nodiscard]] bool available() const { return !template_.empty(); }
  // The prompt text (special tokens written out, to be encoded with parse_special).
  // Throws ApiError(400) when there is no template or it fails on these messages.
  [[nodiscard]] std::string render(const ChatRequest& request) const;

 private:
  std::string template_;
  nlohmann::ordered_json special_tokens_;  // bos_token, eos_token, ... for the context
};

}  // namespace pagoda::server
