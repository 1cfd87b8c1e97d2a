// libFuzzer target for the Jinja engine: input is a template, optionally followed by a NUL
// and a JSON context. Any pagoda::Error is fine; crashes, hangs, leaks and other exceptions
// are bugs. Limits are small so that each input stays fast.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/jinja.h"

namespace {

const nlohmann::ordered_json& default_context() {
  static const nlohmann::ordered_json ctx = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "sys"},
      {"role": "user", "content": "hi <think>x</think> there"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "f", "arguments": {"a": 1}}}]},
      {"role": "tool", "content": "{\"r\": 2}"}
    ],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "n": 3, "f": 1.5
  })");
  return ctx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string source = input.substr(0, nul);
  nlohmann::ordered_json ctx = default_context();
  if (nul != std::string::npos) {
    auto parsed = nlohmann::ordered_json::parse(input.substr(nul + 1), nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object()) ctx = std::move(parsed);
  }
  for (const bool chat : {true, false}) {
    pagoda::jinja::Options options = chat ? pagoda::jinja::chat_template_options() : pagoda::jinja::Options{};
    options.limits.max_steps = 200'000;
    options.limits.max_output_bytes = 1u << 20;
    options.limits.max_string_bytes = 1u << 20;
    options.limits.max_call_depth = 32;
    options.limits.max_range = 10'000;
    try {
      const pagoda::jinja::Template t(source, options);
      (void)t.render(ctx);
    } catch (const pagoda::Error&) {
    }
  }
  return 0;
}
