#include "io/jinja_parser.h"

#include <initializer_list>
#include <string_view>

#include "core/error.h"

namespace pagoda::jinja {
namespace {

constexpr int kMaxNesting = 200;  // deeper templates are refused, so recursion stays bounded

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

  Body run() {
    Body body = parse_body({});
    if (cur().kind != Tok::kEof) error("unexpected tag");
    return body;
  }

 private:
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNesting) p_.error("template nested too deeply");
    }
    ~DepthGuard() { --p_.depth_; }
    Parser& p_;
  };

  const Token& cur() const { return t_[i_]; }
  const Token& peek(size_t n = 1) const { return t_[std::min(i_ + n, t_.size() - 1)]; }
  const Token& next() {
    const Token& t = t_[i_];
    if (i_ + 1 < t_.size()) ++i_;
    return t;
  }

  [[noreturn]] void error(const std::string& what) const {
    const Token& t = cur();
    std::string near = t.kind == Tok::kEof ? "end of template" : "'" + t.text + "'";
    if (t.kind == Tok::kVarEnd) near = "end of print statement";
    if (t.kind == Tok::kBlockEnd) near = "end of statement block";
    fail("jinja: syntax error at line ", t.line, ", column ", t.column, ": ", what, " (at ", near, ")");
  }

  bool is_op(std::string_view op) const { return cur().kind == Tok::kOp && cur().text == op; }
  bool is_name(std::string_view name) const { return cur().kind == Tok::kName && cur().text == name; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) error("expected '" + std::string(op) + "'");
  }
  std::string expect_name() {
    if (cur().kind != Tok::kName) error("expected a name");
    return next().text;
  }
  void expect_block_end() {
    if (cur().kind != Tok::kBlockEnd) error("expected end of statement block");
    next();
  }

  ExprPtr node(ExprKind kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
  }

  // Parses statements until a block tag whose name is in `ends` (left unconsumed, the
  // parser stands on its name) or end of input when `ends` is empty.
  Body parse_body(std::initializer_list<std::string_view> ends) {
    DepthGuard guard(*this);
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.kind == Tok::kEof) {
        if (ends.size() == 0) return body;
        error("unexpected end of template, expected '" + std::string(*(ends.end() - 1)) + "'");
      }
      if (t.kind == Tok::kData) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::kText;
        s->line = t.line;
        s->text = t.text;
        body.push_back(std::move(s));
        next();
      } else if (t.kind == Tok::kVarBegin) {
        next();
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::kPrint;
        s->line = t.line;
        s->expr = parse_tuple(true);
        if (cur().kind != Tok::kVarEnd) error("expected end of print statement");
        next();
        body.push_back(std::move(s));
      } else if (t.kind == Tok::kBlockBegin) {
        next();
        for (std::string_view end : ends)
          if (is_name(end)) return body;
        body.push_back(parse_statement());
      } else {
        error("unexpected token");
      }
    }
  }

  StmtPtr make(StmtKind kind) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->line = cur().line;
    return s;
  }

  StmtPtr parse_statement() {
    if (cur().kind != Tok::kName) error("expected a tag name");
    const std::string tag = cur().text;
    if (tag == "if") return parse_if();
    if (tag == "for") return parse_for();
    if (tag == "set") return parse_set();
    if (tag == "macro") return parse_macro();
    if (tag == "call") return parse_call_block();
    if (tag == "filter") return parse_filter_block();
    if (tag == "break" || tag == "continue") {
      auto s = make(tag == "break" ? StmtKind::kBreak : StmtKind::kContinue);
      next();
      expect_block_end();
      return s;
    }
    if (tag == "generation" || tag == "with") {
      auto s = make(StmtKind::kScope);
      next();
      while (tag == "with" && cur().kind != Tok::kBlockEnd) {
        if (!s->with_vars.empty()) expect_op(",");
        std::string name = expect_name();
        expect_op("=");
        s->with_vars.emplace_back(std::move(name), parse_expression());
      }
      expect_block_end();
      s->body = parse_body({tag == "with" ? "endwith" : "endgeneration"});
      next();
      expect_block_end();
      return s;
    }
    if (tag == "include" || tag == "import" || tag == "from" || tag == "extends" || tag == "block")
      error("'" + tag + "' is not supported: templates cannot load other templates");
    error("unknown tag '" + tag + "'");
  }

  StmtPtr parse_if() {
    auto s = make(StmtKind::kIf);
    next();  // if / elif
    s->expr = parse_tuple(false);
    expect_block_end();
    s->body = parse_body({"elif", "else", "endif"});
    if (is_name("elif")) {
      s->else_body.push_back(parse_if());
      return s;
    }
    if (skip_name("else")) {
      expect_block_end();
      s->else_body = parse_body({"endif"});
    }
    next();  // endif
    expect_block_end();
    return s;
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    const bool paren = skip_op("(");
    do {
      names.push_back(expect_name());
    } while (skip_op(",") && cur().kind == Tok::kName);
    if (paren) expect_op(")");
    return names;
  }

  StmtPtr parse_for() {
    auto s = make(StmtKind::kFor);
    next();
    s->targets = parse_targets();
    if (!skip_name("in")) error("expected 'in'");
    s->expr = parse_tuple(false, true);
    if (skip_name("if")) s->cond = parse_expression();
    if (is_name("recursive")) error("recursive loops are not supported");
    expect_block_end();
    s->body = parse_body({"else", "endfor"});
    if (skip_name("else")) {
      expect_block_end();
      s->else_body = parse_body({"endfor"});
    }
    next();
    expect_block_end();
    return s;
  }

  StmtPtr parse_set() {
    auto s = make(StmtKind::kSet);
    next();
    if (cur().kind == Tok::kName && peek().kind == Tok::kOp && peek().text == ".") {
      auto target = node(ExprKind::kGetAttr, cur().line);
      auto base = node(ExprKind::kName, cur().line);
      base->name = next().text;
      next();
      target->name = expect_name();
      target->args.push_back(std::move(base));
      s->target = std::move(target);
    } else {
      s->targets = parse_targets();
    }
    if (skip_op("=")) {
      s->expr = parse_tuple(true);
      expect_block_end();
      return s;
    }
    if (s->target) error("expected '='");
    s->kind = StmtKind::kSetBlock;
    if (is_op("|")) s->filter = parse_filters(nullptr);
    expect_block_end();
    s->body = parse_body({"endset"});
    next();
    expect_block_end();
    return s;
  }

  void parse_params(std::vector<Param>& params) {
    expect_op("(");
    while (!skip_op(")")) {
      if (!params.empty()) expect_op(",");
      if (skip_op(")")) break;
      Param p;
      p.name = expect_name();
      if (skip_op("=")) p.default_value = parse_expression();
      params.push_back(std::move(p));
    }
  }

  StmtPtr parse_macro() {
    auto s = make(StmtKind::kMacro);
    next();
    s->name = expect_name();
    parse_params(s->params);
    expect_block_end();
    s->body = parse_body({"endmacro"});
    next();
    expect_block_end();
    return s;
  }

  StmtPtr parse_call_block() {
    auto s = make(StmtKind::kCallBlock);
    next();
    if (is_op("(")) parse_params(s->params);
    s->expr = parse_expression();
    if (s->expr->kind != ExprKind::kCall) error("expected a call");
    expect_block_end();
    s->body = parse_body({"endcall"});
    next();
    expect_block_end();
    return s;
  }

  StmtPtr parse_filter_block() {
    auto s = make(StmtKind::kFilterBlock);
    next();
    // The first filter name follows the tag without a '|'.
    s->filter = parse_filters(nullptr, true);
    expect_block_end();
    s->body = parse_body({"endfilter"});
    next();
    expect_block_end();
    return s;
  }

  // Expressions, loosest binding first, as jinja2's parser.
  ExprPtr parse_tuple(bool with_condexpr, bool stop_at_if = false) {
    const int line = cur().line;
    auto first = with_condexpr ? parse_expression() : parse_or();
    if (!is_op(",")) return first;
    auto t = node(ExprKind::kTuple, line);
    t->args.push_back(std::move(first));
    while (skip_op(",")) {
      if (cur().kind == Tok::kVarEnd || cur().kind == Tok::kBlockEnd || is_op(")") || (stop_at_if && is_name("if"))) break;
      t->args.push_back(with_condexpr ? parse_expression() : parse_or());
    }
    return t;
  }

  ExprPtr parse_expression() {
    DepthGuard guard(*this);
    auto e = parse_or();
    while (is_name("if")) {
      auto c = node(ExprKind::kCond, cur().line);
      next();
      c->args.push_back(std::move(e));
      c->args.push_back(parse_or());
      c->args.push_back(skip_name("else") ? parse_expression() : nullptr);
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(std::string op, ExprPtr a, ExprPtr b, int line) {
    auto e = node(ExprKind::kBinary, line);
    e->name = std::move(op);
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  ExprPtr parse_or() {
    auto e = parse_and();
    while (is_name("or")) {
      const int line = next().line;
      e = binary("or", std::move(e), parse_and(), line);
    }
    return e;
  }

  ExprPtr parse_and() {
    auto e = parse_not();
    while (is_name("and")) {
      const int line = next().line;
      e = binary("and", std::move(e), parse_not(), line);
    }
    return e;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard guard(*this);
      auto e = node(ExprKind::kUnary, next().line);
      e->name = "not";
      e->args.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const int line = cur().line;
    auto first = parse_math1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (cur().kind == Tok::kOp && (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                                     cur().text == ">" || cur().text == "<=" || cur().text == ">=")) {
        op = next().text;
      } else if (skip_name("in")) {
        op = "in";
      } else if (is_name("not") && peek().kind == Tok::kName && peek().text == "in") {
        next();
        next();
        op = "not in";
      } else {
        break;
      }
      if (!cmp) {
        cmp = node(ExprKind::kCompare, line);
        cmp->args.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->args.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }

  ExprPtr parse_math1() {
    auto e = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& t = next();
      e = binary(t.text, std::move(e), parse_concat(), t.line);
    }
    return e;
  }

  ExprPtr parse_concat() {
    auto e = parse_math2();
    while (is_op("~")) {
      const int line = next().line;
      e = binary("~", std::move(e), parse_math2(), line);
    }
    return e;
  }

  ExprPtr parse_math2() {
    auto e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = next();
      e = binary(t.text, std::move(e), parse_pow(), t.line);
    }
    return e;
  }

  ExprPtr parse_pow() {
    auto e = parse_unary(true);
    while (is_op("**")) {
      const int line = next().line;
      e = binary("**", std::move(e), parse_unary(true), line);
    }
    return e;
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      e = node(ExprKind::kUnary, t.line);
      e->name = t.text;
      e->args.push_back(parse_unary(false));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    switch (t.kind) {
      case Tok::kName: {
        next();
        auto e = node(ExprKind::kLiteral, t.line);
        if (t.text == "true" || t.text == "True") e->value = Value(true);
        else if (t.text == "false" || t.text == "False") e->value = Value(false);
        else if (t.text == "none" || t.text == "None") e->value = Value::none();
        else {
          e->kind = ExprKind::kName;
          e->name = t.text;
        }
        return e;
      }
      case Tok::kString: {
        auto e = node(ExprKind::kLiteral, t.line);
        std::string s;
        while (cur().kind == Tok::kString) s += next().text;
        e->value = Value(std::move(s));
        return e;
      }
      case Tok::kInt: {
        auto e = node(ExprKind::kLiteral, t.line);
        e->value = Value(t.int_value);
        next();
        return e;
      }
      case Tok::kFloat: {
        auto e = node(ExprKind::kLiteral, t.line);
        e->value = Value(t.float_value);
        next();
        return e;
      }
      case Tok::kOp:
        if (t.text == "(") {
          next();
          if (skip_op(")")) return node(ExprKind::kTuple, t.line);
          auto e = parse_expression();
          if (is_op(",")) {
            auto tuple = node(ExprKind::kTuple, t.line);
            tuple->args.push_back(std::move(e));
            while (skip_op(",") && !is_op(")")) tuple->args.push_back(parse_expression());
            e = std::move(tuple);
          }
          expect_op(")");
          return e;
        }
        if (t.text == "[") {
          next();
          auto e = node(ExprKind::kList, t.line);
          while (!skip_op("]")) {
            if (!e->args.empty()) expect_op(",");
            if (skip_op("]")) break;
            e->args.push_back(parse_expression());
          }
          return e;
        }
        if (t.text == "{") {
          next();
          auto e = node(ExprKind::kDict, t.line);
          while (!skip_op("}")) {
            if (!e->args.empty()) expect_op(",");
            if (skip_op("}")) break;
            e->args.push_back(parse_expression());
            expect_op(":");
            e->args.push_back(parse_expression());
          }
          return e;
        }
        break;
      default: break;
    }
    error("unexpected token in expression");
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      if (is_op(".")) {
        const int line = next().line;
        if (cur().kind == Tok::kInt) {
          auto item = node(ExprKind::kGetItem, line);
          auto index = node(ExprKind::kLiteral, line);
          index->value = Value(next().int_value);
          item->args.push_back(std::move(e));
          item->args.push_back(std::move(index));
          e = std::move(item);
          continue;
        }
        auto attr = node(ExprKind::kGetAttr, line);
        attr->name = expect_name();
        attr->args.push_back(std::move(e));
        e = std::move(attr);
      } else if (is_op("[")) {
        e = parse_subscript(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr e) {
    const int line = next().line;  // [
    ExprPtr parts[3];
    int colons = 0;
    while (!is_op("]")) {
      if (skip_op(":")) {
        if (++colons > 2) error("too many ':' in slice");
        continue;
      }
      if (parts[colons]) error("expected ']'");
      parts[colons] = parse_expression();
    }
    next();
    if (colons == 0) {
      if (!parts[0]) error("expected a subscript");
      auto item = node(ExprKind::kGetItem, line);
      item->args.push_back(std::move(e));
      item->args.push_back(std::move(parts[0]));
      return item;
    }
    auto slice = node(ExprKind::kSlice, line);
    slice->args.push_back(std::move(e));
    for (auto& p : parts) slice->args.push_back(std::move(p));
    return slice;
  }

  void parse_args(Expr& call) {
    expect_op("(");
    bool first = true;
    while (!skip_op(")")) {
      if (!first) expect_op(",");
      first = false;
      if (skip_op(")")) break;
      if (is_op("*") || is_op("**")) error("*args and **kwargs in calls are not supported");
      if (cur().kind == Tok::kName && peek().kind == Tok::kOp && peek().text == "=") {
        std::string name = next().text;
        next();
        call.kwargs.emplace_back(std::move(name), parse_expression());
      } else {
        if (!call.kwargs.empty()) error("positional argument after keyword argument");
        call.args.push_back(parse_expression());
      }
    }
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto call = node(ExprKind::kCall, cur().line);
    call->args.push_back(std::move(callee));
    parse_args(*call);
    return call;
  }

  // `| name(args)` repeated. With `tag_start`, the parser stands on the first name.
  ExprPtr parse_filters(ExprPtr e, bool tag_start = false) {
    while (tag_start || is_op("|")) {
      if (!tag_start) next();
      tag_start = false;
      auto f = node(ExprKind::kFilter, cur().line);
      f->name = expect_name();
      while (is_op(".") && peek().kind == Tok::kName) {
        next();
        f->name += "." + next().text;
      }
      f->args.push_back(std::move(e));
      if (is_op("(")) parse_args(*f);
      e = std::move(f);
    }
    return e;
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    while (true) {
      if (is_op("|")) {
        e = parse_filters(std::move(e));
      } else if (is_name("is")) {
        e = parse_test(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_test(ExprPtr e) {
    auto t = node(ExprKind::kTest, next().line);  // is
    t->negated = skip_name("not");
    t->name = expect_name();
    while (is_op(".") && peek().kind == Tok::kName) {
      next();
      t->name += "." + next().text;
    }
    t->args.push_back(std::move(e));
    const Token& c = cur();
    if (is_op("(")) {
      parse_args(*t);
    } else if ((c.kind == Tok::kName || c.kind == Tok::kString || c.kind == Tok::kInt || c.kind == Tok::kFloat ||
                is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) error("you cannot chain multiple tests with 'is'");
      t->args.push_back(parse_postfix(parse_primary()));
    }
    return t;
  }

  const std::vector<Token>& t_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).run(); }

}  // namespace pagoda::jinja
