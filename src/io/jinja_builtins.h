// Jinja's built-in filters and tests, and the Python methods templates call on strings,
// lists and dicts, as the interpreter dispatches them by name.
#pragma once

#include <string>
#include <vector>

#include "io/jinja_interp.h"
#include "io/jinja_value.h"

namespace pagoda::jinja {

[[nodiscard]] Value apply_filter(Interpreter& in, const std::string& name, const Value& input, Args& args);
[[nodiscard]] bool apply_test(Interpreter& in, const std::string& name, const Value& input, Args& args);

// Whether obj has a method of this name (str, list and dict methods).
[[nodiscard]] bool has_method(const Value& obj, const std::string& name);
[[nodiscard]] Value call_method(Interpreter& in, const Value& obj, const std::string& name, Args& args);

// Argument helpers shared by filters and methods; each throws Error naming `what`.
[[nodiscard]] std::string need_string(const Value& v, const char* what);
[[nodiscard]] int64_t need_int(const Value& v, const char* what);
[[nodiscard]] Value make_list(Interpreter& in, std::vector<Value> items);
[[nodiscard]] std::vector<Value> items_of(Interpreter& in, const Value& dict);  // (key, value) tuples

// Takes the named or positional argument `index`/`name`, or returns fallback.
[[nodiscard]] Value arg(Args& args, size_t index, const char* name, Value fallback = Value());

}  // namespace pagoda::jinja
