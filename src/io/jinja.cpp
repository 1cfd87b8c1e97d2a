#include "io/jinja.h"

#include "io/jinja_interp.h"
#include "io/jinja_lexer.h"
#include "io/jinja_parser.h"

namespace pagoda::jinja {

struct Template::Impl {
  Options options;
  Body body;
};

Options chat_template_options() {
  Options o;
  o.trim_blocks = true;
  o.lstrip_blocks = true;
  o.chat = true;
  return o;
}

Template::Template(const std::string& source, Options options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  LexOptions lex_options;
  lex_options.trim_blocks = options.trim_blocks;
  lex_options.lstrip_blocks = options.lstrip_blocks;
  impl_->body = parse(lex(source, lex_options));
}

Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

std::string Template::render(const nlohmann::ordered_json& context) const {
  Heap heap;
  Interpreter interpreter(impl_->options, heap);
  return interpreter.render(impl_->body, context);
}

}  // namespace pagoda::jinja
