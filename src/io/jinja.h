// pagoda's Jinja2-compatible template engine, enough for the chat templates models ship.
// Templates are sandboxed: no file, environment or host access, and every render is
// bounded in work, output size and call depth; bad templates and contexts throw pagoda::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace pagoda::jinja {

struct Limits {
  uint64_t max_steps = 20'000'000;         // expression evaluations and loop iterations
  size_t max_output_bytes = 32u << 20;     // all text rendered, captured blocks included
  size_t max_string_bytes = 32u << 20;     // any one string built by an expression
  int max_call_depth = 64;                 // nested macro calls
  int64_t max_range = 100'000;             // range() length, as jinja2's sandbox
};

struct Options {
  bool trim_blocks = false;    // jinja2's defaults are off
  bool lstrip_blocks = false;
  // transformers' chat template environment: immutable sandbox (no list.append), its own
  // tojson (ensure_ascii=False, unsorted keys, no HTML escaping), raise_exception and
  // strftime_now globals.
  bool chat = false;
  Limits limits;
};

// The settings transformers renders chat templates with.
[[nodiscard]] Options chat_template_options();

class Template {
 public:
  explicit Template(const std::string& source, Options options = {});
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // context: a JSON object whose members become template variables.
  [[nodiscard]] std::string render(const nlohmann::ordered_json& context) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pagoda::jinja
