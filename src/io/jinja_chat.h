// Renders a model's chat template the way Hugging Face transformers' apply_chat_template
// does: trim_blocks and lstrip_blocks on, its tojson, raise_exception and strftime_now,
// messages' reasoning fields aliased, and extra keyword arguments merged into the context.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace pagoda {

// context: {"messages": [...], "tools": [...]?, "documents": [...]?, "add_generation_prompt":
// bool?, "bos_token": ..., "eos_token": ..., any other template variable}. tools, documents and
// add_generation_prompt default to None, None and false, as transformers passes them.
[[nodiscard]] std::string render_chat_template(const std::string& template_text, const nlohmann::ordered_json& context);
[[nodiscard]] std::string render_chat_template(const std::string& template_text, const nlohmann::json& context);

// Picks the chat template out of a tokenizer_config.json: "chat_template" is a string or a
// list of {"name", "template"} (the one named `name`, "default" when name is empty).
[[nodiscard]] std::string chat_template_from_config(const nlohmann::ordered_json& config, const std::string& name = "");

// A special token in tokenizer_config.json: a string, or an AddedToken object {"content": ...}.
[[nodiscard]] nlohmann::ordered_json special_token_from_config(const nlohmann::ordered_json& config, const std::string& key);

}  // namespace pagoda
