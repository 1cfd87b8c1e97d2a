#include "io/jinja_chat.h"

#include "core/error.h"
#include "io/jinja.h"

namespace pagoda {
namespace {

using OJson = nlohmann::ordered_json;

// transformers' _alias_reasoning_fields: {"thinking": r, **message, "reasoning_content": r}.
OJson alias_reasoning(const OJson& message) {
  if (!message.is_object()) return message;
  const OJson* reasoning = nullptr;
  for (const char* key : {"reasoning_content", "thinking", "reasoning"}) {
    auto it = message.find(key);
    if (it != message.end() && !it->is_null()) {
      reasoning = &*it;
      break;
    }
  }
  if (!reasoning) return message;
  OJson out = OJson::object();
  out["thinking"] = *reasoning;
  for (auto it = message.begin(); it != message.end(); ++it) out[it.key()] = it.value();
  out["reasoning_content"] = *reasoning;
  return out;
}

}  // namespace

std::string render_chat_template(const std::string& template_text, const OJson& context) {
  if (!context.is_object()) fail("chat template: the context must be a JSON object");
  OJson ctx = OJson::object();
  // transformers passes messages, tools, documents and add_generation_prompt first, then kwargs.
  auto messages = context.find("messages");
  if (messages == context.end()) fail("chat template: the context has no \"messages\"");
  if (!messages->is_array()) fail("chat template: \"messages\" must be a list");
  OJson aliased = OJson::array();
  for (const auto& m : *messages) {
    if (!m.is_object()) fail("chat template: each message must be an object");
    // transformers' _normalize_chat_messages drops the keys whose value is None.
    OJson kept = OJson::object();
    for (auto it = m.begin(); it != m.end(); ++it)
      if (!it->is_null()) kept[it.key()] = it.value();
    aliased.push_back(alias_reasoning(kept));
  }
  ctx["messages"] = std::move(aliased);
  ctx["tools"] = context.value("tools", OJson());
  ctx["documents"] = context.value("documents", OJson());
  ctx["add_generation_prompt"] = context.value("add_generation_prompt", OJson(false));
  for (auto it = context.begin(); it != context.end(); ++it)
    if (!ctx.contains(it.key())) ctx[it.key()] = it.value();
  const jinja::Template tmpl(template_text, jinja::chat_template_options());
  return tmpl.render(ctx);
}

std::string render_chat_template(const std::string& template_text, const nlohmann::json& context) {
  return render_chat_template(template_text, OJson::parse(context.dump()));
}

std::string chat_template_from_config(const OJson& config, const std::string& name) {
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) fail("tokenizer config has no chat_template");
  if (it->is_string()) {
    if (!name.empty() && name != "default") fail("tokenizer config has a single chat template, not one named '", name, "'");
    return it->get<std::string>();
  }
  if (!it->is_array()) fail("tokenizer config: chat_template must be a string or a list");
  const std::string wanted = name.empty() ? "default" : name;
  for (const auto& entry : *it) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") || !entry["name"].is_string() ||
        !entry["template"].is_string())
      fail("tokenizer config: chat_template entries must be {name, template} strings");
    if (entry["name"].get<std::string>() == wanted) return entry["template"].get<std::string>();
  }
  fail("tokenizer config: no chat template named '", wanted, "'");
}

OJson special_token_from_config(const OJson& config, const std::string& key) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return OJson();
  if (it->is_string()) return *it;
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) return (*it)["content"];
  fail("tokenizer config: ", key, " must be a string or an object with \"content\"");
}

}  // namespace pagoda
