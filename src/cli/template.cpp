// pagoda template: renders a model's chat template for a conversation, as transformers'
// apply_chat_template(tokenize=False) would, and prints the prompt.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "io/jinja_chat.h"
#include "loader/gguf.h"

namespace pagoda::cli {
namespace {

using OJson = nlohmann::ordered_json;

constexpr size_t kMaxFileBytes = 64u << 20;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open ", path);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > kMaxFileBytes) fail(path, ": not a readable file under 64 MiB");
  in.seekg(0);
  std::string data(static_cast<size_t>(size), '\0');
  in.read(data.data(), size);
  return data;
}

OJson parse_json(const std::string& text, const std::string& what) {
  try {
    return OJson::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(what, ": invalid JSON: ", e.what());
  }
}

// A GGUF model's template and special tokens, as llama.cpp reads them.
OJson config_from_gguf(const std::string& path) {
  const auto gguf = GgufFile::open(path);
  if (!gguf->has("tokenizer.chat_template")) fail(path, ": the GGUF file has no tokenizer.chat_template");
  OJson config = OJson::object();
  config["chat_template"] = gguf->get_string("tokenizer.chat_template");
  if (!gguf->has("tokenizer.ggml.tokens")) return config;
  const std::vector<std::string> tokens = gguf->get_string_array("tokenizer.ggml.tokens");
  // llama.cpp passes these two to chat templates.
  for (const char* key : {"bos", "eos"}) {
    const std::string id_key = std::string("tokenizer.ggml.") + key + "_token_id";
    if (!gguf->has(id_key)) continue;
    const int64_t id = gguf->get_int(id_key);
    if (id < 0 || static_cast<uint64_t>(id) >= tokens.size()) fail(path, ": ", id_key, " ", id, " is outside the vocabulary");
    config[std::string(key) + "_token"] = tokens[static_cast<size_t>(id)];
  }
  return config;
}

void usage() {
  std::fputs(
      "usage: pagoda template MODEL_OR_CONFIG --messages FILE.json [--tools FILE.json]\n"
      "                       [--add-generation-prompt] [--kwargs JSON] [--template-name NAME]\n"
      "MODEL_OR_CONFIG: a GGUF model, a tokenizer_config.json or a folder holding one.\n",
      stderr);
}

}  // namespace

int cmd_template(int argc, char** argv) {
  std::string source, messages_path, tools_path, kwargs_text, template_name;
  bool add_generation_prompt = false;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a, " needs a value");
      return argv[++i];
    };
    if (a == "--messages") messages_path = value();
    else if (a == "--tools") tools_path = value();
    else if (a == "--kwargs") kwargs_text = value();
    else if (a == "--template-name") template_name = value();
    else if (a == "--add-generation-prompt") add_generation_prompt = true;
    else if (a == "--help" || a == "-h") { usage(); return 0; }
    else if (!a.empty() && a[0] == '-') fail("unknown option ", a);
    else if (source.empty()) source = a;
    else fail("unexpected argument ", a);
  }
  if (source.empty() || messages_path.empty()) {
    usage();
    return 2;
  }
  std::filesystem::path config_path(source);
  if (std::filesystem::is_directory(config_path)) config_path /= "tokenizer_config.json";
  const OJson config = config_path.extension() == ".gguf"
                           ? config_from_gguf(config_path.string())
                           : parse_json(read_file(config_path.string()), config_path.string());
  if (!config.is_object()) fail(config_path.string(), ": not a JSON object");
  const std::string tmpl = chat_template_from_config(config, template_name);

  OJson context = OJson::object();
  OJson messages = parse_json(read_file(messages_path), messages_path);
  if (messages.is_object() && messages.contains("messages")) messages = messages["messages"];
  context["messages"] = std::move(messages);
  if (!tools_path.empty()) context["tools"] = parse_json(read_file(tools_path), tools_path);
  context["add_generation_prompt"] = add_generation_prompt;
  // transformers passes the tokenizer's special tokens, then the caller's kwargs over them.
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    OJson token = special_token_from_config(config, key);
    if (!token.is_null()) context[key] = std::move(token);
  }
  if (!kwargs_text.empty()) {
    const OJson kwargs = parse_json(kwargs_text, "--kwargs");
    if (!kwargs.is_object()) fail("--kwargs must be a JSON object");
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it) context[it.key()] = it.value();
  }
  const std::string prompt = render_chat_template(tmpl, context);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  return 0;
}

}  // namespace pagoda::cli
