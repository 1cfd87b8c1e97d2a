// Python's str semantics that templates observe (strip, split, title, replace, format...),
// on UTF-8 strings. Case mapping is ASCII-only; whitespace follows str.isspace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/jinja_interp.h"
#include "io/jinja_value.h"

namespace pagoda::jinja {

[[nodiscard]] bool ascii_space(unsigned char c);
[[nodiscard]] size_t space_at(const std::string& s, size_t i);  // bytes of the whitespace code point at i, or 0
[[nodiscard]] size_t char_len(const std::string& s, size_t i);  // bytes of the code point at i
[[nodiscard]] size_t prev_char(const std::string& s, size_t end);
[[nodiscard]] bool is_alpha(char c);
[[nodiscard]] std::string lower(std::string s);
[[nodiscard]] std::string upper(std::string s);
[[nodiscard]] std::string py_title(const std::string& s);
[[nodiscard]] std::string capitalize(const std::string& s);
// str.replace; count < 0 replaces all. Checks the growing result against the string limit.
[[nodiscard]] std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                                      int64_t count, Interpreter& in);
// str.split: sep None splits on whitespace runs; maxsplit < 0 is unlimited.
[[nodiscard]] std::vector<std::string> py_split(const std::string& s, const Value& sep, int64_t maxsplit);
[[nodiscard]] std::vector<std::string> split_lines(const std::string& s);
// str.strip family: chars null means whitespace.
[[nodiscard]] std::string py_strip(const std::string& s, const std::string* chars, bool left, bool right);
[[nodiscard]] std::string html_escape(const std::string& s);
// str.format with {} / {0} / {name} fields and no format specs.
[[nodiscard]] std::string py_format(const std::string& fmt, Args& args);

}  // namespace pagoda::jinja
