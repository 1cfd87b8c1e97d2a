// Splits a Jinja template into tokens the way jinja2's lexer does: template data, tag
// delimiters and the expression tokens inside tags, with whitespace control (`{%-`, `-%}`,
// `+%}`) and the trim_blocks / lstrip_blocks environment options applied to the data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pagoda::jinja {

struct LexOptions {
  bool trim_blocks = false;    // drop the first newline after a block tag
  bool lstrip_blocks = false;  // drop spaces and tabs before a block tag at line start
};

enum class Tok { kData, kVarBegin, kVarEnd, kBlockBegin, kBlockEnd, kName, kString, kInt, kFloat, kOp, kEof };

struct Token {
  Tok kind;
  std::string text;  // data, name, operator, decoded string literal
  int64_t int_value = 0;
  double float_value = 0;
  int line = 1;
  int column = 1;
};

// Throws pagoda::Error ("jinja: syntax error at line L, column C: ...") on bad input.
[[nodiscard]] std::vector<Token> lex(const std::string& source, const LexOptions& options);

}  // namespace pagoda::jinja
