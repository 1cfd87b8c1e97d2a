// The tree-walking interpreter of pagoda's Jinja engine. It owns the scopes, the heap of
// one render and the sandbox's accounting; filters and methods (jinja_filters.cpp) call
// back into it for callables and limits.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/jinja.h"
#include "io/jinja_ast.h"
#include "io/jinja_value.h"

namespace pagoda::jinja {

struct Scope {
  Dict vars;
  std::shared_ptr<Scope> parent;
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
 public:
  Interpreter(const Options& options, Heap& heap);

  [[nodiscard]] std::string render(const Body& body, const nlohmann::ordered_json& context);

  // For filters and methods.
  [[nodiscard]] Heap& heap() { return heap_; }
  [[nodiscard]] const Options& options() const { return options_; }
  void step(uint64_t n = 1);
  void check_string(size_t bytes);  // refuses strings over the limit, charges work by size
  Value call(const Value& fn, Args& args);
  [[nodiscard]] std::vector<Value> iterate(const Value& v);  // Python's iter(), materialised
  [[nodiscard]] Value get_attr(const Value& obj, const std::string& name);
  [[nodiscard]] Value get_item(const Value& obj, const Value& key);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow exec_body(const Body& body, const ScopePtr& scope, std::string& out);
  Flow exec(const Stmt& s, const ScopePtr& scope, std::string& out);
  Flow exec_for(const Stmt& s, const ScopePtr& scope, std::string& out);
  void exec_set(const Stmt& s, const ScopePtr& scope, Value value);
  Value make_macro(const Stmt& s, const ScopePtr& scope, const std::vector<Param>& params, const Body& body,
                   const std::string& name);
  void write(std::string& out, const std::string& text);

  Value eval(const Expr& e, const ScopePtr& scope);
  Value eval_binary(const Expr& e, const ScopePtr& scope);
  Value eval_compare(const Expr& e, const ScopePtr& scope);
  Value eval_call(const Expr& e, const ScopePtr& scope);
  Value eval_filter(const Expr& e, const ScopePtr& scope, const Value* block_input);
  Value eval_slice(const Expr& e, const ScopePtr& scope);
  void eval_args(const Expr& e, size_t first, const ScopePtr& scope, Args& args);
  Value lookup(const ScopePtr& scope, const std::string& name);
  void install_globals(Scope& globals);

  const Options& options_;
  Heap& heap_;
  uint64_t steps_ = 0;
  size_t output_bytes_ = 0;
  int call_depth_ = 0;
  int line_ = 0;
};

// Undefined values may be printed, tested and iterated; anything else is an error.
void require_defined(const Value& v);

}  // namespace pagoda::jinja
