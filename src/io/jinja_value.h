// The dynamic value type of pagoda's Jinja engine, with Python's semantics where chat
// templates can observe them (str() and repr() of values, truthiness, equality, ordering).
// Containers are shared by reference, as in Python; see Heap for how cycles are freed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace pagoda::jinja {

class Value;
struct List;
struct Dict;
struct Callable;
struct Namespace;
using ListPtr = std::shared_ptr<List>;
using DictPtr = std::shared_ptr<Dict>;
using CallablePtr = std::shared_ptr<Callable>;
using NamespacePtr = std::shared_ptr<Namespace>;

struct Undefined {
  std::string name;  // what was looked up, for error messages
};

class Value {
 public:
  enum class Type { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable, kNamespace };

  Value() : v_(Undefined{}) {}
  static Value undefined(std::string name = {}) { return Value(Undefined{std::move(name)}); }
  static Value none() { return Value(nullptr); }
  Value(std::nullptr_t) : v_(nullptr) {}
  Value(bool b) : v_(b) {}
  Value(int64_t i) : v_(i) {}
  Value(int i) : v_(int64_t{i}) {}
  Value(double d) : v_(d) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(ListPtr l) : v_(std::move(l)) {}
  Value(DictPtr d) : v_(std::move(d)) {}
  Value(CallablePtr c) : v_(std::move(c)) {}
  Value(NamespacePtr n) : v_(std::move(n)) {}
  Value(Undefined u) : v_(std::move(u)) {}

  [[nodiscard]] Type type() const { return static_cast<Type>(v_.index()); }
  [[nodiscard]] bool is_undefined() const { return type() == Type::kUndefined; }
  [[nodiscard]] bool is_none() const { return type() == Type::kNone; }
  [[nodiscard]] bool is_bool() const { return type() == Type::kBool; }
  [[nodiscard]] bool is_int() const { return type() == Type::kInt; }
  [[nodiscard]] bool is_float() const { return type() == Type::kFloat; }
  [[nodiscard]] bool is_number() const { return is_int() || is_float() || is_bool(); }
  [[nodiscard]] bool is_string() const { return type() == Type::kString; }
  [[nodiscard]] bool is_list() const { return type() == Type::kList; }
  [[nodiscard]] bool is_dict() const { return type() == Type::kDict; }
  [[nodiscard]] bool is_callable() const { return type() == Type::kCallable; }
  [[nodiscard]] bool is_namespace() const { return type() == Type::kNamespace; }

  [[nodiscard]] bool as_bool() const { return std::get<bool>(v_); }
  [[nodiscard]] int64_t as_int() const { return is_bool() ? int64_t{as_bool()} : std::get<int64_t>(v_); }
  [[nodiscard]] double as_float() const;  // any number
  [[nodiscard]] const std::string& as_string() const { return std::get<std::string>(v_); }
  [[nodiscard]] const ListPtr& as_list() const { return std::get<ListPtr>(v_); }
  [[nodiscard]] const DictPtr& as_dict() const { return std::get<DictPtr>(v_); }
  [[nodiscard]] const CallablePtr& as_callable() const { return std::get<CallablePtr>(v_); }
  [[nodiscard]] const NamespacePtr& as_namespace() const { return std::get<NamespacePtr>(v_); }
  [[nodiscard]] const std::string& undefined_name() const { return std::get<Undefined>(v_).name; }

  [[nodiscard]] bool truthy() const;
  [[nodiscard]] std::string str() const;   // Python str(); undefined prints as ""
  [[nodiscard]] std::string repr() const;  // Python repr()
  [[nodiscard]] std::string type_name() const;  // as Python names it: 'dict object'

 private:
  std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::string, ListPtr, DictPtr,
               CallablePtr, NamespacePtr>
      v_;
};

struct List {
  std::vector<Value> items;
  bool is_tuple = false;
};

// An insertion-ordered dict; keys hash as Python's do (1, 1.0 and True are one key).
struct Dict {
  std::vector<std::pair<Value, Value>> items;
  std::unordered_map<std::string, size_t> index;

  [[nodiscard]] const Value* find(const Value& key) const;
  void set(const Value& key, Value value);
  bool erase(const Value& key);
};

struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

struct Callable {
  std::string name;
  std::function<Value(Args&)> call;
};

struct Namespace {
  Dict attrs;
};

// Every container made during one render is registered here; clear() empties them all at
// the end so that reference cycles a template builds (ns.self = ns) cannot leak.
class Heap {
 public:
  ListPtr list(std::vector<Value> items = {}, bool is_tuple = false);
  DictPtr dict();
  NamespacePtr ns();
  CallablePtr callable(std::string name, std::function<Value(Args&)> fn);
  void clear();
  ~Heap() { clear(); }

 private:
  std::vector<std::weak_ptr<List>> lists_;
  std::vector<std::weak_ptr<Dict>> dicts_;
  std::vector<std::weak_ptr<Namespace>> namespaces_;
  std::vector<std::weak_ptr<Callable>> callables_;
};

// The hash key Python would use (None if unhashable: lists, dicts).
[[nodiscard]] bool dict_key(const Value& key, std::string& out);

[[nodiscard]] bool values_equal(const Value& a, const Value& b, int depth = 0);
// Python's <: numbers with numbers, strings with strings, sequences elementwise; else throws.
[[nodiscard]] bool values_less(const Value& a, const Value& b, int depth = 0);

[[nodiscard]] std::string float_repr(double d);  // Python's repr(float)

// JSON in and out. to_json follows Python's json.dumps(ensure_ascii=False).
[[nodiscard]] Value from_json(const nlohmann::ordered_json& j, Heap& heap, int depth = 0);
struct JsonStyle {
  int indent = -1;  // < 0: single line
  std::string indent_text;  // used when set (json.dumps accepts a string indent)
  std::string item_sep = ", ";
  std::string key_sep = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;  // escape non-ASCII as \uXXXX
};
void to_json(const Value& v, const JsonStyle& style, std::string& out, int depth = 0);

// UTF-8 helpers: Python strings index by code point.
[[nodiscard]] std::vector<std::string> utf8_chars(const std::string& s);
[[nodiscard]] size_t utf8_length(const std::string& s);

}  // namespace pagoda::jinja
