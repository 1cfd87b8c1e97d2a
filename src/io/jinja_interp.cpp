#include "io/jinja_interp.h"

#include <cmath>
#include <ctime>
#include <initializer_list>
#include <string_view>

#include "core/error.h"
#include "io/jinja_builtins.h"

namespace pagoda::jinja {
namespace {

struct DepthGuard {
  DepthGuard(int& depth, int limit) : depth_(depth) {
    if (++depth_ > limit) fail("jinja: macro calls nested deeper than ", limit);
  }
  ~DepthGuard() { --depth_; }
  int& depth_;
};

void check_overflow(bool overflow) {
  if (overflow) fail("jinja: integer overflow");
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) fail("jinja: integer division or modulo by zero");
  if (a == INT64_MIN && b == -1) fail("jinja: integer overflow");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t py_mod(int64_t a, int64_t b) {
  if (b == 0) fail("jinja: integer division or modulo by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t int_pow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) check_overflow(__builtin_mul_overflow(result, base, &result));
    exp >>= 1;
    if (exp > 0) check_overflow(__builtin_mul_overflow(base, base, &base));
  }
  return result;
}

std::string short_type(const Value& v) {
  std::string t = v.type_name();
  const size_t sp = t.find(" object");
  return sp == std::string::npos ? t : t.substr(0, sp);
}

[[noreturn]] void bad_operands(const std::string& op, const Value& a, const Value& b) {
  fail("jinja: unsupported operand type(s) for ", op, ": '", short_type(a), "' and '", short_type(b), "'");
}

// Python's slice.indices().
void slice_indices(int64_t len, const Value& start, const Value& stop, const Value& step_v, int64_t& lo, int64_t& hi,
                   int64_t& step) {
  auto as_index = [](const Value& v) {
    if (!v.is_int() && !v.is_bool()) fail("jinja: slice indices must be integers or None");
    return v.as_int();
  };
  step = step_v.is_none() || step_v.is_undefined() ? 1 : as_index(step_v);
  if (step == 0) fail("jinja: slice step cannot be zero");
  auto clamp = [&](const Value& v, int64_t fallback) {
    if (v.is_none() || v.is_undefined()) return fallback;
    int64_t i = as_index(v);
    if (i < 0) i = std::max<int64_t>(i + len, step < 0 ? -1 : 0);
    else i = std::min<int64_t>(i, step < 0 ? len - 1 : len);
    return i;
  };
  lo = clamp(start, step < 0 ? len - 1 : 0);
  hi = clamp(stop, step < 0 ? -1 : len);
}

// Concatenation without operator+ chains, which GCC 12 misdiagnoses (-Wrestrict).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

}  // namespace

void require_defined(const Value& v) {
  if (!v.is_undefined()) return;
  const std::string& hint = v.undefined_name();
  fail("jinja: ", hint.empty() ? std::string("value is undefined") : hint);
}

Interpreter::Interpreter(const Options& options, Heap& heap) : options_(options), heap_(heap) {}

void Interpreter::step(uint64_t n) {
  steps_ += n;
  if (steps_ > options_.limits.max_steps) fail("jinja: template exceeded its work limit (", options_.limits.max_steps, " steps)");
}

void Interpreter::check_string(size_t bytes) {
  if (bytes > options_.limits.max_string_bytes)
    fail("jinja: string of ", bytes, " bytes exceeds the limit of ", options_.limits.max_string_bytes);
  step(bytes / 64);
}

void Interpreter::write(std::string& out, const std::string& text) {
  output_bytes_ += text.size();
  if (output_bytes_ > options_.limits.max_output_bytes)
    fail("jinja: output exceeds the limit of ", options_.limits.max_output_bytes, " bytes");
  step(text.size() / 64);
  out += text;
}

std::string Interpreter::render(const Body& body, const nlohmann::ordered_json& context) {
  if (!context.is_object()) fail("jinja: the template context must be a JSON object");
  auto globals = std::make_shared<Scope>();
  install_globals(*globals);
  for (auto it = context.begin(); it != context.end(); ++it) globals->vars.set(Value(it.key()), from_json(it.value(), heap_));
  auto root = std::make_shared<Scope>();
  root->parent = globals;
  std::string out;
  try {
    (void)exec_body(body, root, out);
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.rfind("jinja: ", 0) == 0) msg.erase(0, 7);
    fail("jinja: line ", line_, ": ", msg);
  }
  return out;
}

void Interpreter::install_globals(Scope& g) {
  auto add = [&](const char* name, std::function<Value(Args&)> fn) {
    g.vars.set(Value(name), Value(heap_.callable(name, std::move(fn))));
  };
  add("range", [this](Args& a) {
    if (!a.keyword.empty() || a.positional.empty() || a.positional.size() > 3) fail("jinja: range() takes 1 to 3 integer arguments");
    for (const Value& v : a.positional)
      if (!v.is_int() && !v.is_bool()) fail("jinja: range() arguments must be integers, not ", short_type(v));
    int64_t start = 0, stop, stride = 1;
    if (a.positional.size() == 1) {
      stop = a.positional[0].as_int();
    } else {
      start = a.positional[0].as_int();
      stop = a.positional[1].as_int();
      if (a.positional.size() == 3) stride = a.positional[2].as_int();
    }
    if (stride == 0) fail("jinja: range() arg 3 must not be zero");
    const long double n = std::ceil((static_cast<long double>(stop) - start) / stride);
    if (n > options_.limits.max_range) fail("jinja: range too big (more than ", options_.limits.max_range, " items)");
    std::vector<Value> items;
    for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) items.emplace_back(start + i * stride);
    step(items.size());
    return Value(heap_.list(std::move(items)));
  });
  auto to_dict = [this](Args& a, Dict& d, const char* what) {
    if (a.positional.size() > 1) fail("jinja: ", what, "() takes at most one positional argument");
    if (!a.positional.empty()) {
      const Value& src = a.positional[0];
      if (src.is_dict()) {
        for (const auto& kv : src.as_dict()->items) d.set(kv.first, kv.second);
      } else {
        for (const Value& item : iterate(src)) {
          if (!item.is_list() || item.as_list()->items.size() != 2) fail("jinja: ", what, "(): sequence elements must be pairs");
          d.set(item.as_list()->items[0], item.as_list()->items[1]);
        }
      }
    }
    for (auto& [k, v] : a.keyword) d.set(Value(k), v);
  };
  add("namespace", [this, to_dict](Args& a) {
    auto ns = heap_.ns();
    to_dict(a, ns->attrs, "namespace");
    if (options_.chat)
      for (const auto& kv : ns->attrs.items)
        if (kv.first.is_string() && !kv.first.as_string().empty() && kv.first.as_string()[0] == '_')
          fail("jinja: chat templates cannot store underscore-prefixed attributes on a namespace");
    return Value(ns);
  });
  add("dict", [this, to_dict](Args& a) {
    auto d = heap_.dict();
    to_dict(a, *d, "dict");
    return Value(d);
  });
  if (!options_.chat) return;
  add("raise_exception", [](Args& a) -> Value {
    fail("jinja: template raised an exception: ", a.positional.empty() ? std::string() : a.positional[0].str());
  });
  add("strftime_now", [](Args& a) {
    if (a.positional.size() != 1 || !a.positional[0].is_string()) fail("jinja: strftime_now(format) takes one string");
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[256];
    const std::string& fmt = a.positional[0].as_string();
    if (fmt.size() > 64) fail("jinja: strftime_now: format too long");
    const size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
    return Value(std::string(buf, n));
  });
}

Interpreter::Flow Interpreter::exec_body(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const auto& s : body) {
    const Flow f = exec(*s, scope, out);
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec(const Stmt& s, const ScopePtr& scope, std::string& out) {
  step();
  line_ = s.line;
  switch (s.kind) {
    case StmtKind::kText: write(out, s.text); return Flow::kNormal;
    case StmtKind::kPrint: {
      const Value v = eval(*s.expr, scope);
      write(out, v.str());
      return Flow::kNormal;
    }
    case StmtKind::kIf:
      return exec_body(eval(*s.expr, scope).truthy() ? s.body : s.else_body, scope, out);
    case StmtKind::kFor: return exec_for(s, scope, out);
    case StmtKind::kSet: exec_set(s, scope, eval(*s.expr, scope)); return Flow::kNormal;
    case StmtKind::kSetBlock: {
      std::string captured;
      (void)exec_body(s.body, scope, captured);
      Value v(std::move(captured));
      if (s.filter) v = eval_filter(*s.filter, scope, &v);
      exec_set(s, scope, std::move(v));
      return Flow::kNormal;
    }
    case StmtKind::kMacro:
      scope->vars.set(Value(s.name), make_macro(s, scope, s.params, s.body, s.name));
      return Flow::kNormal;
    case StmtKind::kCallBlock: {
      const Expr& call_expr = *s.expr;
      Value fn = eval(*call_expr.args[0], scope);
      Args args;
      eval_args(call_expr, 1, scope, args);
      args.keyword.emplace_back("caller", make_macro(s, scope, s.params, s.body, "caller"));
      write(out, call(fn, args).str());
      return Flow::kNormal;
    }
    case StmtKind::kFilterBlock: {
      std::string captured;
      (void)exec_body(s.body, scope, captured);
      Value v(std::move(captured));
      write(out, eval_filter(*s.filter, scope, &v).str());
      return Flow::kNormal;
    }
    case StmtKind::kBreak: return Flow::kBreak;
    case StmtKind::kContinue: return Flow::kContinue;
    case StmtKind::kScope: {
      auto inner = std::make_shared<Scope>();
      inner->parent = scope;
      for (const auto& [name, expr] : s.with_vars) inner->vars.set(Value(name), eval(*expr, scope));
      return exec_body(s.body, inner, out);
    }
  }
  return Flow::kNormal;
}

void Interpreter::exec_set(const Stmt& s, const ScopePtr& scope, Value value) {
  if (s.target) {
    const Value ns = lookup(scope, s.target->args[0]->name);
    if (!ns.is_namespace()) fail("jinja: cannot assign attribute on non-namespace object");
    if (options_.chat && !s.target->name.empty() && s.target->name[0] == '_')
      fail("jinja: chat templates cannot store underscore-prefixed attributes on a namespace");
    ns.as_namespace()->attrs.set(Value(s.target->name), std::move(value));
    return;
  }
  if (s.targets.size() == 1) {
    scope->vars.set(Value(s.targets[0]), std::move(value));
    return;
  }
  std::vector<Value> items = iterate(value);
  if (items.size() != s.targets.size())
    fail("jinja: cannot unpack ", items.size(), " values into ", s.targets.size(), " names");
  for (size_t i = 0; i < items.size(); ++i) scope->vars.set(Value(s.targets[i]), std::move(items[i]));
}

Interpreter::Flow Interpreter::exec_for(const Stmt& s, const ScopePtr& scope, std::string& out) {
  std::vector<Value> items = iterate(eval(*s.expr, scope));
  auto bind = [&](const ScopePtr& target_scope, const Value& item) {
    if (s.targets.size() == 1) {
      target_scope->vars.set(Value(s.targets[0]), item);
      return;
    }
    std::vector<Value> parts = iterate(item);
    if (parts.size() != s.targets.size())
      fail("jinja: cannot unpack ", parts.size(), " values into ", s.targets.size(), " loop variables");
    for (size_t i = 0; i < parts.size(); ++i) target_scope->vars.set(Value(s.targets[i]), parts[i]);
  };
  if (s.cond) {
    std::vector<Value> kept;
    for (const Value& item : items) {
      step();
      auto probe = std::make_shared<Scope>();
      probe->parent = scope;
      bind(probe, item);
      if (eval(*s.cond, probe).truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    (void)exec_body(s.else_body, scope, out);
    return Flow::kNormal;
  }
  const int64_t n = static_cast<int64_t>(items.size());
  // One loop object per loop, updated in place: templates read it, they do not keep it.
  auto loop = heap_.dict();
  auto position = std::make_shared<int64_t>(0);
  for (const char* key : {"index", "index0", "revindex", "revindex0", "first", "last", "length", "depth", "depth0",
                          "previtem", "nextitem"})
    loop->set(Value(key), Value());
  loop->set(Value("cycle"), Value(heap_.callable("cycle", [position](Args& a) {
    if (a.positional.empty()) fail("jinja: no items for cycling given");
    return a.positional[static_cast<size_t>(*position) % a.positional.size()];
  })));
  for (int64_t i = 0; i < n; ++i) {
    step();
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    bind(inner, items[static_cast<size_t>(i)]);
    *position = i;
    auto& f = loop->items;
    f[0].second = Value(i + 1);
    f[1].second = Value(i);
    f[2].second = Value(n - i);
    f[3].second = Value(n - i - 1);
    f[4].second = Value(i == 0);
    f[5].second = Value(i == n - 1);
    f[6].second = Value(n);
    f[7].second = Value(1);
    f[8].second = Value(0);
    f[9].second = i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item");
    f[10].second = i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item");
    inner->vars.set(Value("loop"), Value(loop));
    if (exec_body(s.body, inner, out) == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Value Interpreter::make_macro(const Stmt& s, const ScopePtr& scope, const std::vector<Param>& params, const Body& body,
                              const std::string& name) {
  (void)s;
  const std::vector<Param>* ps = &params;
  const Body* b = &body;
  // The macro holds its defining scope, which may hold the macro: Heap::clear() breaks that.
  ScopePtr strong = scope;
  return Value(heap_.callable(name, [this, ps, b, strong](Args& a) {
    DepthGuard guard(call_depth_, options_.limits.max_call_depth);
    auto inner = std::make_shared<Scope>();
    inner->parent = strong;
    size_t next_positional = 0;
    auto varargs = heap_.list({}, true);
    auto kwargs = heap_.dict();
    for (const Param& p : *ps) {
      bool bound = false;
      for (auto& [k, v] : a.keyword)
        if (k == p.name) {
          inner->vars.set(Value(p.name), v);
          bound = true;
        }
      if (bound) continue;
      if (next_positional < a.positional.size()) {
        inner->vars.set(Value(p.name), a.positional[next_positional++]);
      } else if (p.default_value) {
        inner->vars.set(Value(p.name), eval(*p.default_value, inner));
      } else {
        inner->vars.set(Value(p.name), Value::undefined(cat({"'", p.name, "' is undefined"})));
      }
    }
    for (; next_positional < a.positional.size(); ++next_positional) varargs->items.push_back(a.positional[next_positional]);
    for (auto& [k, v] : a.keyword) {
      bool is_param = false;
      for (const Param& p : *ps) is_param |= p.name == k;
      if (k == "caller") inner->vars.set(Value("caller"), v);
      else if (!is_param) kwargs->set(Value(k), v);
    }
    inner->vars.set(Value("varargs"), Value(varargs));
    inner->vars.set(Value("kwargs"), Value(kwargs));
    std::string out;
    const int saved_line = line_;
    (void)exec_body(*b, inner, out);
    line_ = saved_line;
    return Value(std::move(out));
  }));
}

Value Interpreter::lookup(const ScopePtr& scope, const std::string& name) {
  const Value key(name);
  for (const Scope* s = scope.get(); s; s = s->parent.get())
    if (const Value* v = s->vars.find(key)) return *v;
  return Value::undefined(cat({"'", name, "' is undefined"}));
}

Value Interpreter::call(const Value& fn, Args& args) {
  require_defined(fn);
  if (!fn.is_callable()) fail("jinja: '", short_type(fn), "' object is not callable");
  const Callable& c = *fn.as_callable();
  if (!c.call) fail("jinja: function ", c.name, " is no longer callable");
  step();
  return c.call(args);
}

std::vector<Value> Interpreter::iterate(const Value& v) {
  switch (v.type()) {
    case Value::Type::kUndefined: return {};
    case Value::Type::kList: return v.as_list()->items;
    case Value::Type::kDict: {
      std::vector<Value> keys;
      for (const auto& kv : v.as_dict()->items) keys.push_back(kv.first);
      return keys;
    }
    case Value::Type::kString: {
      std::vector<Value> chars;
      for (auto& c : utf8_chars(v.as_string())) chars.emplace_back(std::move(c));
      step(chars.size());
      return chars;
    }
    default: fail("jinja: '", short_type(v), "' object is not iterable");
  }
}

Value Interpreter::get_attr(const Value& obj, const std::string& name) {
  require_defined(obj);
  if (has_method(obj, name)) {
    Value self = obj;
    return Value(heap_.callable(name, [this, self, name](Args& a) { return call_method(*this, self, name, a); }));
  }
  const Dict* d = obj.is_dict() ? obj.as_dict().get() : obj.is_namespace() ? &obj.as_namespace()->attrs : nullptr;
  if (d)
    if (const Value* v = d->find(Value(name))) return *v;
  return Value::undefined(cat({"'", obj.type_name(), "' has no attribute '", name, "'"}));
}

Value Interpreter::get_item(const Value& obj, const Value& key) {
  require_defined(obj);
  require_defined(key);
  if (obj.is_dict()) {
    if (const Value* v = obj.as_dict()->find(key)) return *v;
  } else if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    if (obj.is_list()) {
      const auto& items = obj.as_list()->items;
      int64_t i = key.as_int();
      if (i < 0) i += static_cast<int64_t>(items.size());
      if (i >= 0 && i < static_cast<int64_t>(items.size())) return items[static_cast<size_t>(i)];
    } else {
      const auto chars = utf8_chars(obj.as_string());
      int64_t i = key.as_int();
      if (i < 0) i += static_cast<int64_t>(chars.size());
      if (i >= 0 && i < static_cast<int64_t>(chars.size())) return Value(chars[static_cast<size_t>(i)]);
    }
    return Value::undefined(cat({"'", obj.type_name(), "' has no element ", key.str()}));
  }
  if (key.is_string()) return get_attr(obj, key.as_string());
  return Value::undefined(cat({"'", obj.type_name(), "' has no element ", key.repr()}));
}

void Interpreter::eval_args(const Expr& e, size_t first, const ScopePtr& scope, Args& args) {
  for (size_t i = first; i < e.args.size(); ++i) args.positional.push_back(eval(*e.args[i], scope));
  for (const auto& [k, v] : e.kwargs) args.keyword.emplace_back(k, eval(*v, scope));
}

Value Interpreter::eval(const Expr& e, const ScopePtr& scope) {
  step();
  switch (e.kind) {
    case ExprKind::kLiteral: return e.value;
    case ExprKind::kName: return lookup(scope, e.name);
    case ExprKind::kList: case ExprKind::kTuple: {
      std::vector<Value> items;
      for (const auto& a : e.args) items.push_back(eval(*a, scope));
      return Value(heap_.list(std::move(items), e.kind == ExprKind::kTuple));
    }
    case ExprKind::kDict: {
      auto d = heap_.dict();
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        Value k = eval(*e.args[i], scope);
        require_defined(k);
        d->set(k, eval(*e.args[i + 1], scope));
      }
      return Value(d);
    }
    case ExprKind::kUnary: {
      const Value v = eval(*e.args[0], scope);
      if (e.name == "not") return Value(!v.truthy());
      require_defined(v);
      if (!v.is_number()) fail("jinja: bad operand type for unary ", e.name, ": '", short_type(v), "'");
      if (e.name == "+") return v.is_bool() ? Value(v.as_int()) : v;
      if (v.is_float()) return Value(-v.as_float());
      if (v.as_int() == INT64_MIN) fail("jinja: integer overflow");
      return Value(-v.as_int());
    }
    case ExprKind::kBinary: return eval_binary(e, scope);
    case ExprKind::kCompare: return eval_compare(e, scope);
    case ExprKind::kCond:
      if (eval(*e.args[1], scope).truthy()) return eval(*e.args[0], scope);
      return e.args[2] ? eval(*e.args[2], scope) : Value::undefined("the conditional expression had no else");
    case ExprKind::kGetAttr: return get_attr(eval(*e.args[0], scope), e.name);
    case ExprKind::kGetItem: {
      const Value obj = eval(*e.args[0], scope);
      return get_item(obj, eval(*e.args[1], scope));
    }
    case ExprKind::kSlice: return eval_slice(e, scope);
    case ExprKind::kCall: return eval_call(e, scope);
    case ExprKind::kFilter: return eval_filter(e, scope, nullptr);
    case ExprKind::kTest: {
      const Value v = eval(*e.args[0], scope);
      Args args;
      eval_args(e, 1, scope, args);
      return Value(apply_test(*this, e.name, v, args) != e.negated);
    }
  }
  return Value();
}

Value Interpreter::eval_call(const Expr& e, const ScopePtr& scope) {
  const Expr& callee = *e.args[0];
  Args args;
  if (callee.kind == ExprKind::kGetAttr) {
    // Method calls skip building a bound-method object.
    const Value self = eval(*callee.args[0], scope);
    require_defined(self);
    eval_args(e, 1, scope, args);
    if (has_method(self, callee.name)) return call_method(*this, self, callee.name, args);
    return call(get_attr(self, callee.name), args);
  }
  const Value fn = eval(callee, scope);
  eval_args(e, 1, scope, args);
  return call(fn, args);
}

Value Interpreter::eval_filter(const Expr& e, const ScopePtr& scope, const Value* block_input) {
  Value input = e.args[0] ? (e.args[0]->kind == ExprKind::kFilter ? eval_filter(*e.args[0], scope, block_input)
                                                                   : eval(*e.args[0], scope))
                          : *block_input;
  step();
  Args args;
  eval_args(e, 1, scope, args);
  return apply_filter(*this, e.name, input, args);
}

Value Interpreter::eval_slice(const Expr& e, const ScopePtr& scope) {
  const Value obj = eval(*e.args[0], scope);
  require_defined(obj);
  Value parts[3];
  for (int i = 0; i < 3; ++i) parts[i] = e.args[i + 1] ? eval(*e.args[i + 1], scope) : Value::none();
  std::vector<Value> seq;
  std::vector<std::string> chars;
  int64_t len;
  if (obj.is_list()) {
    len = static_cast<int64_t>(obj.as_list()->items.size());
  } else if (obj.is_string()) {
    chars = utf8_chars(obj.as_string());
    len = static_cast<int64_t>(chars.size());
  } else {
    fail("jinja: '", short_type(obj), "' object is not subscriptable");
  }
  int64_t lo, hi, stride;
  slice_indices(len, parts[0], parts[1], parts[2], lo, hi, stride);
  step(static_cast<uint64_t>(len));
  if (obj.is_list()) {
    const auto& items = obj.as_list()->items;
    for (int64_t i = lo; stride > 0 ? i < hi : i > hi; i += stride) seq.push_back(items[static_cast<size_t>(i)]);
    return Value(heap_.list(std::move(seq), obj.as_list()->is_tuple));
  }
  std::string out;
  for (int64_t i = lo; stride > 0 ? i < hi : i > hi; i += stride) out += chars[static_cast<size_t>(i)];
  return Value(std::move(out));
}

Value Interpreter::eval_compare(const Expr& e, const ScopePtr& scope) {
  Value left = eval(*e.args[0], scope);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval(*e.args[i + 1], scope);
    const std::string& op = e.ops[i];
    bool r;
    if (op == "==") r = values_equal(left, right);
    else if (op == "!=") r = !values_equal(left, right);
    else if (op == "in" || op == "not in") {
      Args args;
      args.positional.push_back(right);
      r = apply_test(*this, "in", left, args) == (op == "in");
    } else {
      require_defined(left);
      require_defined(right);
      if (op == "<") r = values_less(left, right);
      else if (op == ">") r = values_less(right, left);
      else if (op == "<=") r = !values_less(right, left);
      else r = !values_less(left, right);
    }
    if (!r) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Value Interpreter::eval_binary(const Expr& e, const ScopePtr& scope) {
  const std::string& op = e.name;
  Value a = eval(*e.args[0], scope);
  if (op == "and") return a.truthy() ? eval(*e.args[1], scope) : a;
  if (op == "or") return a.truthy() ? a : eval(*e.args[1], scope);
  Value b = eval(*e.args[1], scope);
  if (op == "~") {
    std::string sa = a.str(), sb = b.str();
    check_string(sa.size() + sb.size());
    return Value(sa + sb);
  }
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) {
    const bool floats = a.is_float() || b.is_float();
    if (op == "/") {
      if (b.as_float() == 0) fail("jinja: division by zero");
      return Value(a.as_float() / b.as_float());
    }
    if (op == "**") {
      if (!floats && b.as_int() >= 0) return Value(int_pow(a.as_int(), b.as_int()));
      if (a.as_float() == 0 && b.as_float() < 0) fail("jinja: zero cannot be raised to a negative power");
      return Value(std::pow(a.as_float(), b.as_float()));
    }
    if (floats) {
      const double x = a.as_float(), y = b.as_float();
      if (op == "+") return Value(x + y);
      if (op == "-") return Value(x - y);
      if (op == "*") return Value(x * y);
      if (y == 0) fail("jinja: float division or modulo by zero");
      if (op == "//") return Value(std::floor(x / y));
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return Value(r);
    }
    const int64_t x = a.as_int(), y = b.as_int();
    int64_t r = 0;
    if (op == "+") check_overflow(__builtin_add_overflow(x, y, &r));
    if (op == "-") check_overflow(__builtin_sub_overflow(x, y, &r));
    if (op == "*") check_overflow(__builtin_mul_overflow(x, y, &r));
    if (op == "+" || op == "-" || op == "*") return Value(r);
    if (op == "//") return Value(floor_div(x, y));
    return Value(py_mod(x, y));
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      check_string(a.as_string().size() + b.as_string().size());
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_list() && b.is_list() && a.as_list()->is_tuple == b.as_list()->is_tuple) {
      std::vector<Value> items = a.as_list()->items;
      items.insert(items.end(), b.as_list()->items.begin(), b.as_list()->items.end());
      step(items.size());
      return Value(heap_.list(std::move(items), a.as_list()->is_tuple));
    }
  }
  if (op == "*") {
    const Value& seq = a.is_number() ? b : a;
    const Value& count = a.is_number() ? a : b;
    if (count.is_number() && !count.is_float() && (seq.is_string() || seq.is_list())) {
      const int64_t n = std::max<int64_t>(0, count.as_int());
      const size_t unit = seq.is_string() ? seq.as_string().size() : seq.as_list()->items.size() * sizeof(Value);
      if (unit != 0 && static_cast<uint64_t>(n) > options_.limits.max_string_bytes / unit)
        fail("jinja: repetition result exceeds the limit of ", options_.limits.max_string_bytes, " bytes");
      check_string(unit * static_cast<size_t>(n));
      if (seq.is_string()) {
        std::string out;
        for (int64_t i = 0; i < n; ++i) out += seq.as_string();
        return Value(std::move(out));
      }
      std::vector<Value> items;
      for (int64_t i = 0; i < n; ++i) items.insert(items.end(), seq.as_list()->items.begin(), seq.as_list()->items.end());
      return Value(heap_.list(std::move(items), seq.as_list()->is_tuple));
    }
  }
  if (op == "%" && a.is_string()) fail("jinja: printf-style string formatting is not supported");
  bad_operands(op, a, b);
}

}  // namespace pagoda::jinja
