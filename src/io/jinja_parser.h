// Parses Jinja tokens into a syntax tree, following jinja2's grammar and operator
// precedence. Errors are pagoda::Error with the line and column of the offending token.
#pragma once

#include <vector>

#include "io/jinja_ast.h"
#include "io/jinja_lexer.h"

namespace pagoda::jinja {

[[nodiscard]] Body parse(const std::vector<Token>& tokens);

}  // namespace pagoda::jinja
