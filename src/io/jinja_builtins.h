// Jinja's built-in filters and tests, and the Python methods templates call on strings,
// lists and dicts, as the interpreter dispatches them by name.
#pragma once

#include <string>

#include "io/jinja_interp.h"
#include "io/jinja_value.h"

namespace pagoda::jinja {

[[nodiscard]] Value apply_filter(Interpreter& in, const std::string& name, const Value& input, Args& args);
[[nodiscard]] bool apply_test(Interpreter& in, const std::string& name, const Value& input, Args& args);

// Whether obj has a method of this name (str, list and dict methods).
[[nodiscard]] bool has_method(const Value& obj, const std::string& name);
[[nodiscard]] Value call_method(Interpreter& in, const Value& obj, const std::string& name, Args& args);

// Python's str.strip family: chars null means whitespace.
[[nodiscard]] std::string py_strip(const std::string& s, const std::string* chars, bool left, bool right);

// Takes the named or positional argument `index`/`name`, or returns fallback.
[[nodiscard]] Value arg(Args& args, size_t index, const char* name, Value fallback = Value());

}  // namespace pagoda::jinja
