#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_set>

#include "core/error.h"
#include "io/jinja_builtins.h"
#include "io/jinja_strings.h"

namespace pagoda::jinja {
namespace {

// Jinja's attribute paths: "a.b.0" looks up a, then b, then item 0.
Value attribute_path(Interpreter& in, const Value& obj, const Value& path) {
  if (path.is_int()) return in.get_item(obj, path);
  Value cur = obj;
  const std::string& p = need_string(path, "attribute");
  size_t start = 0;
  while (true) {
    const size_t dot = p.find('.', start);
    const std::string part = p.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    cur = digits && part.size() < 18 ? in.get_item(cur, Value(static_cast<int64_t>(std::atoll(part.c_str()))))
                                     : in.get_item(cur, Value(part));
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

// Sort key: case-insensitive strings unless asked otherwise, as jinja2's filters.
Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(lower(v.as_string()));
  return v;
}

Value filter_tojson(Interpreter& in, const Value& input, Args& args) {
  JsonStyle style;
  std::string out;
  if (in.options().chat) {
    // transformers: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
    style.ensure_ascii = arg(args, 0, "ensure_ascii", Value(false)).truthy();
    const Value indent = arg(args, 1, "indent", Value::none());
    const Value separators = arg(args, 2, "separators", Value::none());
    style.sort_keys = arg(args, 3, "sort_keys", Value(false)).truthy();
    if (indent.is_string()) style.indent_text = indent.as_string();
    else if (!indent.is_none()) style.indent = static_cast<int>(std::clamp<int64_t>(need_int(indent, "tojson indent"), 0, 64));
    if (!indent.is_none()) style.item_sep = ",";
    if (!separators.is_none()) {
      if (!separators.is_list() || separators.as_list()->items.size() != 2) fail("jinja: tojson separators must be a pair");
      style.item_sep = need_string(separators.as_list()->items[0], "tojson separators");
      style.key_sep = need_string(separators.as_list()->items[1], "tojson separators");
    }
    to_json(input, style, out);
    return Value(std::move(out));
  }
  // jinja2's own: sorted keys, ASCII only, HTML-sensitive characters escaped.
  style.ensure_ascii = true;
  style.sort_keys = true;
  const Value indent = arg(args, 0, "indent", Value::none());
  if (!indent.is_none()) {
    style.indent = static_cast<int>(std::clamp<int64_t>(need_int(indent, "tojson indent"), 0, 64));
    style.item_sep = ",";
  }
  to_json(input, style, out);
  std::string safe;
  for (char c : out) {
    if (c == '<') safe += "\\u003c";
    else if (c == '>') safe += "\\u003e";
    else if (c == '&') safe += "\\u0026";
    else if (c == '\'') safe += "\\u0027";
    else safe += c;
  }
  return Value(std::move(safe));
}

Value filter_indent(Interpreter& in, const Value& input, Args& args) {
  const Value width = arg(args, 0, "width", Value(4));
  const bool first = arg(args, 1, "first", Value(false)).truthy();
  const bool blank = arg(args, 2, "blank", Value(false)).truthy();
  std::string indent;
  if (width.is_string()) indent = width.as_string();
  else indent = std::string(static_cast<size_t>(std::clamp<int64_t>(need_int(width, "indent width"), 0, 256)), ' ');
  const std::vector<std::string> lines = split_lines(input.str() + "\n");
  std::string rv;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) rv += "\n";
    if (i > 0 && (blank || !lines[i].empty())) rv += indent;
    rv += lines[i];
    in.check_string(rv.size());
  }
  if (first) rv = indent + rv;
  return Value(std::move(rv));
}

Value filter_round(const Value& input, Args& args) {
  const int64_t precision = need_int(arg(args, 0, "precision", Value(0)), "round precision");
  const std::string method = arg(args, 1, "method", Value("common")).str();
  if (!input.is_number()) fail("jinja: round expects a number");
  if (method == "common" && !input.is_float()) return Value(input.as_int());
  const double scale = std::pow(10.0, static_cast<double>(std::clamp<int64_t>(precision, -300, 300)));
  const double x = input.as_float() * scale;
  double r;
  if (method == "common") r = std::nearbyint(x);  // Python's round: half to even
  else if (method == "ceil") r = std::ceil(x);
  else if (method == "floor") r = std::floor(x);
  else fail("jinja: round method must be common, ceil or floor");
  return Value(r / scale);
}

Value to_int(const Value& input, const Value& fallback, int base) {
  if (input.is_int() || input.is_bool()) return Value(input.as_int());
  if (input.is_float()) {
    const double d = input.as_float();
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
    return Value(static_cast<int64_t>(d));
  }
  if (input.is_string()) {
    std::string s = py_strip(input.as_string(), nullptr, true, true);
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    if (s.empty()) return fallback;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, base);
    if (*end == 0 && errno == 0) return Value(static_cast<int64_t>(v));
    const double d = std::strtod(s.c_str(), &end);
    if (*end == 0 && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value(static_cast<int64_t>(d));
  }
  return fallback;
}

Value to_float(const Value& input, const Value& fallback) {
  if (input.is_number()) return Value(input.as_float());
  if (input.is_string()) {
    const std::string s = py_strip(input.as_string(), nullptr, true, true);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == 0) return Value(d);
  }
  return fallback;
}

Value filter_map(Interpreter& in, const Value& input, Args& args) {
  std::vector<Value> out;
  const std::vector<Value> items = in.iterate(input);
  Value attribute = arg(args, 99, "attribute");
  if (!attribute.is_undefined()) {
    const Value fallback = arg(args, 99, "default");
    for (const Value& item : items) {
      Value v = attribute_path(in, item, attribute);
      out.push_back(v.is_undefined() && !fallback.is_undefined() ? fallback : v);
    }
    return make_list(in, std::move(out));
  }
  if (args.positional.empty()) fail("jinja: map needs a filter name or attribute=");
  const std::string name = need_string(args.positional[0], "map");
  Args rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : items) {
    Args copy = rest;
    out.push_back(apply_filter(in, name, item, copy));
  }
  return make_list(in, std::move(out));
}

Value filter_select(Interpreter& in, const Value& input, Args& args, bool by_attr, bool keep) {
  std::vector<Value> out;
  size_t next = 0;
  Value attribute;
  if (by_attr) {
    if (args.positional.empty()) fail("jinja: selectattr/rejectattr need an attribute");
    attribute = args.positional[next++];
  }
  std::string test;
  if (next < args.positional.size()) test = need_string(args.positional[next++], "test name");
  Args test_args;
  test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next), args.positional.end());
  test_args.keyword = args.keyword;
  for (const Value& item : in.iterate(input)) {
    const Value v = by_attr ? attribute_path(in, item, attribute) : item;
    Args copy = test_args;
    const bool pass = test.empty() ? v.truthy() : apply_test(in, test, v, copy);
    if (pass == keep) out.push_back(item);
  }
  return make_list(in, std::move(out));
}

Value filter_sort(Interpreter& in, const Value& input, Args& args) {
  const bool reverse = arg(args, 0, "reverse", Value(false)).truthy();
  const bool case_sensitive = arg(args, 1, "case_sensitive", Value(false)).truthy();
  const Value attribute = arg(args, 2, "attribute", Value::none());
  std::vector<Value> items = in.iterate(input);
  std::vector<std::pair<Value, Value>> keyed;
  for (const Value& item : items)
    keyed.emplace_back(sort_key(attribute.is_none() ? item : attribute_path(in, item, attribute), case_sensitive), item);
  in.step(items.size() * 8);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return reverse ? values_less(b.first, a.first) : values_less(a.first, b.first);
  });
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(kv.second);
  return make_list(in, std::move(out));
}

Value filter_dictsort(Interpreter& in, const Value& input, Args& args) {
  if (!input.is_dict()) fail("jinja: dictsort expects a dict");
  const bool case_sensitive = arg(args, 0, "case_sensitive", Value(false)).truthy();
  const std::string by = arg(args, 1, "by", Value("key")).str();
  const bool reverse = arg(args, 2, "reverse", Value(false)).truthy();
  std::vector<Value> items = items_of(in, input);
  const size_t pos = by == "value" ? 1 : 0;
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const Value ka = sort_key(a.as_list()->items[pos], case_sensitive);
    const Value kb = sort_key(b.as_list()->items[pos], case_sensitive);
    return reverse ? values_less(kb, ka) : values_less(ka, kb);
  });
  return make_list(in, std::move(items));
}

Value filter_unique(Interpreter& in, const Value& input, Args& args) {
  const bool case_sensitive = arg(args, 0, "case_sensitive", Value(false)).truthy();
  const Value attribute = arg(args, 1, "attribute", Value::none());
  std::vector<Value> out;
  std::unordered_set<std::string> seen;
  for (const Value& item : in.iterate(input)) {
    const Value key = sort_key(attribute.is_none() ? item : attribute_path(in, item, attribute), case_sensitive);
    std::string k;
    if (!dict_key(key, k)) fail("jinja: unique: unhashable item");
    if (seen.insert(k).second) out.push_back(item);
  }
  return make_list(in, std::move(out));
}

Value filter_minmax(Interpreter& in, const Value& input, Args& args, bool want_max) {
  const bool case_sensitive = arg(args, 0, "case_sensitive", Value(false)).truthy();
  const Value attribute = arg(args, 1, "attribute", Value::none());
  const std::vector<Value> items = in.iterate(input);
  if (items.empty()) return Value::undefined("no min/max item, sequence was empty");
  const Value* best = &items[0];
  Value best_key = sort_key(attribute.is_none() ? items[0] : attribute_path(in, items[0], attribute), case_sensitive);
  for (const Value& item : items) {
    const Value k = sort_key(attribute.is_none() ? item : attribute_path(in, item, attribute), case_sensitive);
    if (want_max ? values_less(best_key, k) : values_less(k, best_key)) {
      best = &item;
      best_key = k;
    }
  }
  return *best;
}

Value add(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return Value(a.as_float() + b.as_float());
    int64_t r;
    if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) fail("jinja: integer overflow");
    return Value(r);
  }
  fail("jinja: sum: unsupported operand types '", a.type_name(), "' and '", b.type_name(), "'");
}

Value length(const Value& v) {
  switch (v.type()) {
    case Value::Type::kUndefined: return Value(0);
    case Value::Type::kString: return Value(static_cast<int64_t>(utf8_length(v.as_string())));
    case Value::Type::kList: return Value(static_cast<int64_t>(v.as_list()->items.size()));
    case Value::Type::kDict: return Value(static_cast<int64_t>(v.as_dict()->items.size()));
    default: fail("jinja: object of type '", v.type_name(), "' has no len()");
  }
}

}  // namespace

std::string need_string(const Value& v, const char* what) {
  if (!v.is_string()) fail("jinja: ", what, " expects a string, not ", v.type_name());
  return v.as_string();
}

int64_t need_int(const Value& v, const char* what) {
  if (!v.is_int() && !v.is_bool()) fail("jinja: ", what, " expects an integer, not ", v.type_name());
  return v.as_int();
}

Value make_list(Interpreter& in, std::vector<Value> items) { return Value(in.heap().list(std::move(items))); }

std::vector<Value> items_of(Interpreter& in, const Value& d) {
  std::vector<Value> out;
  for (const auto& kv : d.as_dict()->items) out.push_back(Value(in.heap().list({kv.first, kv.second}, true)));
  return out;
}

Value arg(Args& args, size_t index, const char* name, Value fallback) {
  for (auto& [k, v] : args.keyword)
    if (k == name) return v;
  if (index < args.positional.size()) return args.positional[index];
  return fallback;
}

Value apply_filter(Interpreter& in, const std::string& name, const Value& input, Args& args) {
  auto str_in = [&] { return input.str(); };
  if (name == "default" || name == "d") {
    const Value fallback = arg(args, 0, "default_value", Value(""));
    const bool boolean = arg(args, 1, "boolean", Value(false)).truthy();
    return (input.is_undefined() || (boolean && !input.truthy())) ? fallback : input;
  }
  if (name == "safe" || name == "string") {
    if (name == "string") require_defined(input);
    return Value(str_in());
  }
  if (name == "tojson") return filter_tojson(in, input, args);
  if (name == "length" || name == "count") return length(input);
  if (name == "items") {
    if (input.is_undefined()) return make_list(in, {});
    if (!input.is_dict()) fail("jinja: items expects a mapping");
    return make_list(in, items_of(in, input));
  }
  if (name == "dictsort") return filter_dictsort(in, input, args);
  if (name == "map") return filter_map(in, input, args);
  if (name == "select" || name == "reject") return filter_select(in, input, args, false, name == "select");
  if (name == "selectattr" || name == "rejectattr") return filter_select(in, input, args, true, name == "selectattr");
  if (name == "sort") return filter_sort(in, input, args);
  if (name == "unique") return filter_unique(in, input, args);
  if (name == "min" || name == "max") return filter_minmax(in, input, args, name == "max");
  if (name == "indent") return filter_indent(in, input, args);
  if (name == "round") return filter_round(input, args);
  if (name == "int") {
    const int64_t base = need_int(arg(args, 1, "base", Value(10)), "int base");
    if (base < 2 || base > 36) fail("jinja: int base must be 2..36");
    return to_int(input, arg(args, 0, "default", Value(0)), static_cast<int>(base));
  }
  if (name == "float") return to_float(input, arg(args, 0, "default", Value(0.0)));
  if (name == "abs") {
    if (input.is_float()) return Value(std::fabs(input.as_float()));
    if (!input.is_number()) fail("jinja: bad operand type for abs(): '", input.type_name(), "'");
    if (input.as_int() == INT64_MIN) fail("jinja: integer overflow");
    return Value(std::abs(input.as_int()));
  }
  if (name == "attr") return in.get_attr(input, need_string(arg(args, 0, "name"), "attr"));
  if (name == "first" || name == "last") {
    std::vector<Value> items = in.iterate(input);
    if (items.empty()) return Value::undefined("no " + name + " item, sequence was empty");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") return make_list(in, in.iterate(input));
  if (name == "reverse") {
    if (input.is_string()) {
      auto chars = utf8_chars(input.as_string());
      std::string out;
      for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
      return Value(std::move(out));
    }
    std::vector<Value> items = in.iterate(input);
    std::reverse(items.begin(), items.end());
    return make_list(in, std::move(items));
  }
  if (name == "join") {
    const std::string sep = arg(args, 0, "d", Value("")).str();
    const Value attribute = arg(args, 1, "attribute", Value::none());
    std::string out;
    bool first = true;
    for (const Value& item : in.iterate(input)) {
      if (!first) out += sep;
      first = false;
      out += (attribute.is_none() ? item : attribute_path(in, item, attribute)).str();
      in.check_string(out.size());
    }
    return Value(std::move(out));
  }
  if (name == "sum") {
    const Value attribute = arg(args, 0, "attribute", Value::none());
    Value total = arg(args, 1, "start", Value(0));
    for (const Value& item : in.iterate(input)) total = add(total, attribute.is_none() ? item : attribute_path(in, item, attribute));
    return total;
  }
  if (name == "batch") {
    const int64_t n = need_int(arg(args, 0, "linecount"), "batch size");
    if (n <= 0) fail("jinja: batch size must be positive");
    const Value fill = arg(args, 1, "fill_with", Value::none());
    std::vector<Value> out, cur;
    for (const Value& item : in.iterate(input)) {
      cur.push_back(item);
      if (static_cast<int64_t>(cur.size()) == n) out.push_back(make_list(in, std::exchange(cur, {})));
    }
    if (!cur.empty()) {
      if (!fill.is_none())
        while (static_cast<int64_t>(cur.size()) < n) cur.push_back(fill);
      out.push_back(make_list(in, std::move(cur)));
    }
    return make_list(in, std::move(out));
  }
  if (name == "wordcount") return Value(static_cast<int64_t>(py_split(str_in(), Value::none(), -1).size()));
  // String filters take str() of their input, as jinja2's soft_str.
  if (name == "trim") {
    const Value chars = arg(args, 0, "chars", Value::none());
    if (chars.is_none()) return Value(py_strip(str_in(), nullptr, true, true));
    const std::string cs = need_string(chars, "trim chars");
    return Value(py_strip(str_in(), &cs, true, true));
  }
  if (name == "upper") return Value(upper(str_in()));
  if (name == "lower") return Value(lower(str_in()));
  if (name == "capitalize") return Value(capitalize(str_in()));
  if (name == "title") {
    // jinja2 capitalizes each word after a run of whitespace, '-', or brackets.
    std::string s = str_in(), out;
    bool word_start = true;
    for (char c : s) {
      const bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || ascii_space(static_cast<unsigned char>(c));
      out += word_start ? upper(std::string(1, c))[0] : lower(std::string(1, c))[0];
      word_start = sep;
    }
    return Value(std::move(out));
  }
  if (name == "replace") {
    const std::string from = arg(args, 0, "old").str(), to = arg(args, 1, "new").str();
    const Value count = arg(args, 2, "count", Value::none());
    return Value(replace_all(str_in(), from, to, count.is_none() ? -1 : need_int(count, "replace count"), in));
  }
  if (name == "escape" || name == "e" || name == "forceescape") return Value(html_escape(str_in()));
  if (name == "center") {
    const int64_t width = std::min<int64_t>(need_int(arg(args, 0, "width", Value(80)), "center width"), 4096);
    std::string s = str_in();
    const int64_t len = static_cast<int64_t>(utf8_length(s));
    if (width <= len) return Value(s);
    const int64_t total = width - len, left = total / 2 + (total & width & 1);
    return Value(std::string(static_cast<size_t>(left), ' ') + s + std::string(static_cast<size_t>(total - left), ' '));
  }
  fail("jinja: no filter named '", name, "'");
}

bool apply_test(Interpreter& in, const std::string& name, const Value& v, Args& args) {
  auto other = [&] { return arg(args, 0, "other"); };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable") return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
  if (name == "sequence") return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
  if (name == "callable") return v.is_callable();
  if (name == "odd" || name == "even") {
    require_defined(v);
    if (!v.is_int() && !v.is_bool()) fail("jinja: ", name, " test expects an integer");
    return (v.as_int() % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    require_defined(v);
    const Value n = other();
    if (!v.is_number() || !n.is_number()) fail("jinja: divisibleby expects numbers");
    if (v.is_float() || n.is_float()) {
      if (n.as_float() == 0) fail("jinja: float modulo by zero");
      return std::fmod(v.as_float(), n.as_float()) == 0;
    }
    if (n.as_int() == 0) fail("jinja: integer division or modulo by zero");
    return n.as_int() == -1 || v.as_int() % n.as_int() == 0;
  }
  if (name == "lower") return lower(v.str()) == v.str() && upper(v.str()) != v.str();
  if (name == "upper") return upper(v.str()) == v.str() && lower(v.str()) != v.str();
  if (name == "eq" || name == "equalto" || name == "==") return values_equal(v, other());
  if (name == "ne" || name == "!=") return !values_equal(v, other());
  if (name == "lt" || name == "lessthan" || name == "<") return values_less(v, other());
  if (name == "gt" || name == "greaterthan" || name == ">") return values_less(other(), v);
  if (name == "le" || name == "<=") return !values_less(other(), v);
  if (name == "ge" || name == ">=") return !values_less(v, other());
  if (name == "sameas") {
    const Value o = other();
    if (v.type() != o.type()) return false;
    if (v.is_list()) return v.as_list() == o.as_list();
    if (v.is_dict()) return v.as_dict() == o.as_dict();
    return values_equal(v, o);
  }
  if (name == "in") {
    const Value seq = arg(args, 0, "seq");
    require_defined(v);
    switch (seq.type()) {
      case Value::Type::kUndefined: return false;
      case Value::Type::kString:
        if (!v.is_string()) fail("jinja: 'in <string>' requires string as left operand, not ", v.type_name());
        return seq.as_string().find(v.as_string()) != std::string::npos;
      case Value::Type::kList:
        for (const Value& item : seq.as_list()->items) {
          in.step();
          if (values_equal(v, item)) return true;
        }
        return false;
      case Value::Type::kDict: return seq.as_dict()->find(v) != nullptr;
      case Value::Type::kNamespace: return seq.as_namespace()->attrs.find(v) != nullptr;
      default: fail("jinja: argument of type '", seq.type_name(), "' is not iterable");
    }
  }
  if (name == "escaped") return false;
  if (name == "filter" || name == "test") return v.is_string();
  fail("jinja: no test named '", name, "'");
}

}  // namespace pagoda::jinja
