#include "io/jinja_value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace pagoda::jinja {
namespace {

constexpr int kMaxNesting = 128;  // containers nested deeper than this are refused

void check_depth(int depth) {
  if (depth > kMaxNesting) fail("jinja: values nested too deeply (or cyclic)");
}

std::string repr_string(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == static_cast<unsigned char>(quote)) { out += '\\'; out += static_cast<char>(c); }
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

void repr_into(const Value& v, std::string& out, int depth);

void repr_seq(const List& l, std::string& out, int depth) {
  out += l.is_tuple ? '(' : '[';
  for (size_t i = 0; i < l.items.size(); ++i) {
    if (i) out += ", ";
    repr_into(l.items[i], out, depth + 1);
  }
  if (l.is_tuple && l.items.size() == 1) out += ',';
  out += l.is_tuple ? ')' : ']';
}

void repr_dict(const Dict& d, std::string& out, int depth) {
  out += '{';
  for (size_t i = 0; i < d.items.size(); ++i) {
    if (i) out += ", ";
    repr_into(d.items[i].first, out, depth + 1);
    out += ": ";
    repr_into(d.items[i].second, out, depth + 1);
  }
  out += '}';
}

void repr_into(const Value& v, std::string& out, int depth) {
  check_depth(depth);
  switch (v.type()) {
    case Value::Type::kString: out += repr_string(v.as_string()); break;
    case Value::Type::kList: repr_seq(*v.as_list(), out, depth); break;
    case Value::Type::kDict: repr_dict(*v.as_dict(), out, depth); break;
    case Value::Type::kNamespace:
      out += "<Namespace ";
      repr_dict(v.as_namespace()->attrs, out, depth);
      out += '>';
      break;
    case Value::Type::kUndefined: out += "Undefined"; break;
    default: out += v.str(); break;
  }
}

void json_escape_code_point(const std::string& s, size_t& i, std::string& out) {
  const unsigned char c = s[i];
  const int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
  uint32_t cp = n == 3 ? c & 0x07 : n == 2 ? c & 0x0f : n == 1 ? c & 0x1f : c;
  for (int k = 0; k < n && i + 1 < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[++i]) & 0x3f);
  char buf[16];
  if (cp >= 0x10000) {
    cp -= 0x10000;
    std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
  } else {
    std::snprintf(buf, sizeof buf, "\\u%04x", cp);
  }
  out += buf;
}

void json_string(const std::string& s, std::string& out, bool ensure_ascii) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (ensure_ascii && c >= 0x80) {
      json_escape_code_point(s, i, out);
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void json_newline(const JsonStyle& style, std::string& out, int level) {
  if (style.indent < 0 && style.indent_text.empty()) return;
  out += '\n';
  const std::string unit = style.indent_text.empty() ? std::string(style.indent, ' ') : style.indent_text;
  for (int i = 0; i < level; ++i) out += unit;
}

std::string json_key(const Value& k) {
  switch (k.type()) {
    case Value::Type::kString: return k.as_string();
    case Value::Type::kBool: return k.as_bool() ? "true" : "false";
    case Value::Type::kNone: return "null";
    case Value::Type::kInt: return std::to_string(k.as_int());
    case Value::Type::kFloat: return float_repr(k.as_float());
    default: fail("jinja: tojson: keys must be str, int, float, bool or None, not ", k.type_name());
  }
}

}  // namespace

double Value::as_float() const {
  if (is_float()) return std::get<double>(v_);
  return static_cast<double>(as_int());
}

bool Value::truthy() const {
  switch (type()) {
    case Type::kUndefined: case Type::kNone: return false;
    case Type::kBool: return as_bool();
    case Type::kInt: return as_int() != 0;
    case Type::kFloat: return as_float() != 0.0;
    case Type::kString: return !as_string().empty();
    case Type::kList: return !as_list()->items.empty();
    case Type::kDict: return !as_dict()->items.empty();
    default: return true;
  }
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  // buf is "-d.ddde[+-]xx": split into digits and decimal exponent.
  std::string s(buf);
  const bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  const size_t e = s.find('e');
  const int exponent = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (s[i] != '.') digits += s[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  if (exponent >= -5 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(-exponent - 1, '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out += digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  std::snprintf(buf, sizeof buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + buf;
}

std::string Value::str() const {
  switch (type()) {
    case Type::kUndefined: return "";
    case Type::kNone: return "None";
    case Type::kBool: return as_bool() ? "True" : "False";
    case Type::kInt: return std::to_string(as_int());
    case Type::kFloat: return float_repr(as_float());
    case Type::kString: return as_string();
    case Type::kCallable: return "<function " + as_callable()->name + ">";
    default: {
      std::string out;
      repr_into(*this, out, 0);
      return out;
    }
  }
}

std::string Value::repr() const {
  std::string out;
  repr_into(*this, out, 0);
  return out;
}

std::string Value::type_name() const {
  switch (type()) {
    case Type::kUndefined: return "undefined";
    case Type::kNone: return "NoneType object";
    case Type::kBool: return "bool object";
    case Type::kInt: return "int object";
    case Type::kFloat: return "float object";
    case Type::kString: return "str object";
    case Type::kList: return as_list()->is_tuple ? "tuple object" : "list object";
    case Type::kDict: return "dict object";
    case Type::kCallable: return "function";
    case Type::kNamespace: return "Namespace object";
  }
  return "object";
}

bool dict_key(const Value& key, std::string& out) {
  switch (key.type()) {
    case Value::Type::kString: out = "s" + key.as_string(); return true;
    case Value::Type::kNone: out = "n"; return true;
    case Value::Type::kBool: case Value::Type::kInt: out = "i" + std::to_string(key.as_int()); return true;
    case Value::Type::kFloat: {
      const double d = key.as_float();
      if (d == std::floor(d) && std::fabs(d) < 9e18) {
        out = "i" + std::to_string(static_cast<int64_t>(d));
      } else {
        out = "f" + float_repr(d);
      }
      return true;
    }
    case Value::Type::kList:
      if (key.as_list()->is_tuple) {
        out = "t";
        for (const Value& item : key.as_list()->items) {
          std::string part;
          if (!dict_key(item, part)) return false;
          out += std::to_string(part.size()) + ":" + part;
        }
        return true;
      }
      return false;
    default: return false;
  }
}

const Value* Dict::find(const Value& key) const {
  std::string k;
  if (!dict_key(key, k)) return nullptr;
  auto it = index.find(k);
  return it == index.end() ? nullptr : &items[it->second].second;
}

void Dict::set(const Value& key, Value value) {
  std::string k;
  if (!dict_key(key, k)) fail("jinja: unhashable type: '", key.type_name(), "'");
  auto it = index.find(k);
  if (it != index.end()) {
    items[it->second].second = std::move(value);
    return;
  }
  index.emplace(k, items.size());
  items.emplace_back(key, std::move(value));
}

bool Dict::erase(const Value& key) {
  std::string k;
  if (!dict_key(key, k)) return false;
  auto it = index.find(k);
  if (it == index.end()) return false;
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(it->second));
  index.clear();
  for (size_t i = 0; i < items.size(); ++i) {
    std::string ki;
    (void)dict_key(items[i].first, ki);
    index.emplace(ki, i);
  }
  return true;
}

ListPtr Heap::list(std::vector<Value> items, bool is_tuple) {
  auto l = std::make_shared<List>();
  l->items = std::move(items);
  l->is_tuple = is_tuple;
  lists_.push_back(l);
  return l;
}

DictPtr Heap::dict() {
  auto d = std::make_shared<Dict>();
  dicts_.push_back(d);
  return d;
}

NamespacePtr Heap::ns() {
  auto n = std::make_shared<Namespace>();
  namespaces_.push_back(n);
  return n;
}

CallablePtr Heap::callable(std::string name, std::function<Value(Args&)> fn) {
  auto c = std::make_shared<Callable>();
  c->name = std::move(name);
  c->call = std::move(fn);
  callables_.push_back(c);
  return c;
}

void Heap::clear() {
  // Move contents out before they die, so that destroying one container cannot recurse
  // through a long chain of others.
  std::vector<Value> graveyard;
  for (auto& w : lists_)
    if (auto l = w.lock()) {
      for (auto& v : l->items) graveyard.push_back(std::move(v));
      l->items.clear();
    }
  for (auto& w : dicts_)
    if (auto d = w.lock()) {
      for (auto& kv : d->items) graveyard.push_back(std::move(kv.second));
      d->items.clear();
      d->index.clear();
    }
  for (auto& w : namespaces_)
    if (auto n = w.lock()) {
      for (auto& kv : n->attrs.items) graveyard.push_back(std::move(kv.second));
      n->attrs.items.clear();
      n->attrs.index.clear();
    }
  for (auto& w : callables_)
    if (auto c = w.lock()) c->call = nullptr;  // closures may hold values
  lists_.clear();
  dicts_.clear();
  namespaces_.clear();
  callables_.clear();
  graveyard.clear();
}

bool values_equal(const Value& a, const Value& b, int depth) {
  check_depth(depth);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_float() == b.as_float();
    return a.as_int() == b.as_int();
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Value::Type::kUndefined: case Value::Type::kNone: return true;
    case Value::Type::kString: return a.as_string() == b.as_string();
    case Value::Type::kList: {
      const auto& x = *a.as_list();
      const auto& y = *b.as_list();
      if (x.is_tuple != y.is_tuple || x.items.size() != y.items.size()) return false;
      for (size_t i = 0; i < x.items.size(); ++i)
        if (!values_equal(x.items[i], y.items[i], depth + 1)) return false;
      return true;
    }
    case Value::Type::kDict: {
      const auto& x = *a.as_dict();
      const auto& y = *b.as_dict();
      if (x.items.size() != y.items.size()) return false;
      for (const auto& [k, v] : x.items) {
        const Value* other = y.find(k);
        if (!other || !values_equal(v, *other, depth + 1)) return false;
      }
      return true;
    }
    case Value::Type::kCallable: return a.as_callable() == b.as_callable();
    case Value::Type::kNamespace: return a.as_namespace() == b.as_namespace();
    default: return false;
  }
}

bool values_less(const Value& a, const Value& b, int depth) {
  check_depth(depth);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_float() < b.as_float();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if (a.is_list() && b.is_list() && a.as_list()->is_tuple == b.as_list()->is_tuple) {
    const auto& x = a.as_list()->items;
    const auto& y = b.as_list()->items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (values_equal(x[i], y[i], depth + 1)) continue;
      return values_less(x[i], y[i], depth + 1);
    }
    return x.size() < y.size();
  }
  fail("jinja: '<' not supported between instances of '", a.type_name(), "' and '", b.type_name(), "'");
}

Value from_json(const nlohmann::ordered_json& j, Heap& heap, int depth) {
  check_depth(depth);
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      auto l = heap.list();
      for (const auto& item : j) l->items.push_back(from_json(item, heap, depth + 1));
      return Value(l);
    }
    case nlohmann::ordered_json::value_t::object: {
      auto d = heap.dict();
      for (auto it = j.begin(); it != j.end(); ++it) d->set(Value(it.key()), from_json(it.value(), heap, depth + 1));
      return Value(d);
    }
    default: fail("jinja: unsupported JSON value in context");
  }
}

void to_json(const Value& v, const JsonStyle& style, std::string& out, int depth) {
  check_depth(depth);
  switch (v.type()) {
    case Value::Type::kNone: out += "null"; return;
    case Value::Type::kBool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Type::kInt: out += std::to_string(v.as_int()); return;
    case Value::Type::kFloat: {
      const double d = v.as_float();
      if (std::isnan(d)) out += "NaN";
      else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
      else out += float_repr(d);
      return;
    }
    case Value::Type::kString: json_string(v.as_string(), out, style.ensure_ascii); return;
    case Value::Type::kList: {
      const auto& items = v.as_list()->items;
      if (items.empty()) { out += "[]"; return; }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += style.item_sep;
        json_newline(style, out, depth + 1);
        to_json(items[i], style, out, depth + 1);
      }
      json_newline(style, out, depth);
      out += ']';
      return;
    }
    case Value::Type::kDict: case Value::Type::kNamespace: {
      const Dict& d = v.is_dict() ? *v.as_dict() : v.as_namespace()->attrs;
      if (d.items.empty()) { out += "{}"; return; }
      std::vector<std::pair<std::string, const Value*>> entries;
      for (const auto& [k, val] : d.items) entries.emplace_back(json_key(k), &val);
      if (style.sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.first < b.first; });
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += style.item_sep;
        json_newline(style, out, depth + 1);
        json_string(entries[i].first, out, style.ensure_ascii);
        out += style.key_sep;
        to_json(*entries[i].second, style, out, depth + 1);
      }
      json_newline(style, out, depth);
      out += '}';
      return;
    }
    default: fail("jinja: tojson: object of type ", v.type_name(), " is not JSON serializable");
  }
}

std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t n = 1;
    const unsigned char c = s[i];
    if (c >= 0xf0) n = 4;
    else if (c >= 0xe0) n = 3;
    else if (c >= 0xc0) n = 2;
    n = std::min(n, s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) {
    const unsigned char c = s[i];
    i += c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
  }
  return n;
}

}  // namespace pagoda::jinja
