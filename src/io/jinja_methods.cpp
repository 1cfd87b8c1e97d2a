#include <algorithm>
#include <unordered_set>

#include "core/error.h"
#include "io/jinja_builtins.h"
#include "io/jinja_strings.h"

namespace pagoda::jinja {

bool has_method(const Value& obj, const std::string& name) {
  static const std::unordered_set<std::string> kStr = {
      "startswith", "endswith", "strip", "lstrip", "rstrip", "split", "rsplit", "upper", "lower", "title",
      "capitalize", "replace", "find", "rfind", "count", "join", "format", "isdigit", "isalpha", "isalnum",
      "isspace", "islower", "isupper", "splitlines", "index"};
  static const std::unordered_set<std::string> kDict = {"get", "items", "keys", "values", "pop", "update", "copy",
                                                        "setdefault", "clear"};
  static const std::unordered_set<std::string> kList = {"append", "extend", "pop", "insert", "remove", "index",
                                                        "count", "sort", "reverse", "copy", "clear"};
  if (obj.is_string()) return kStr.count(name) > 0;
  if (obj.is_dict()) return kDict.count(name) > 0;
  if (obj.is_list()) return obj.as_list()->is_tuple ? (name == "index" || name == "count") : kList.count(name) > 0;
  return false;
}

namespace {

Value string_method(Interpreter& in, const std::string& s, const std::string& name, Args& args) {
  if (name == "startswith" || name == "endswith") {
    const Value p = arg(args, 0, "prefix");
    auto match = [&](const Value& x) {
      const std::string& t = need_string(x, name.c_str());
      if (t.size() > s.size()) return false;
      return name == "startswith" ? s.compare(0, t.size(), t) == 0 : s.compare(s.size() - t.size(), t.size(), t) == 0;
    };
    if (p.is_list() && p.as_list()->is_tuple) {
      for (const Value& x : p.as_list()->items)
        if (match(x)) return Value(true);
      return Value(false);
    }
    return Value(match(p));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const Value chars = arg(args, 0, "chars", Value::none());
    std::string cs;
    if (!chars.is_none()) cs = need_string(chars, name.c_str());
    return Value(py_strip(s, chars.is_none() ? nullptr : &cs, name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    const Value sep = arg(args, 0, "sep", Value::none());
    const int64_t maxsplit = need_int(arg(args, 1, "maxsplit", Value(-1)), "maxsplit");
    std::vector<std::string> parts;
    if (name == "rsplit" && maxsplit >= 0) {
      // Split the reversed string and reverse back, which is how rsplit differs.
      if (sep.is_string()) {
        const std::string& d = sep.as_string();
        if (d.empty()) fail("jinja: empty separator");
        size_t end = s.size();
        while (static_cast<int64_t>(parts.size()) < maxsplit) {
          const size_t hit = end >= d.size() ? s.rfind(d, end - d.size()) : std::string::npos;
          if (hit == std::string::npos) break;
          parts.insert(parts.begin(), s.substr(hit + d.size(), end - hit - d.size()));
          end = hit;
        }
        parts.insert(parts.begin(), s.substr(0, end));
      } else {
        fail("jinja: rsplit with maxsplit needs a separator");
      }
    } else {
      parts = py_split(s, sep, maxsplit);
    }
    std::vector<Value> out;
    for (auto& p : parts) out.emplace_back(std::move(p));
    in.step(out.size());
    return make_list(in, std::move(out));
  }
  if (name == "upper") return Value(upper(s));
  if (name == "lower") return Value(lower(s));
  if (name == "title") return Value(py_title(s));
  if (name == "capitalize") return Value(capitalize(s));
  if (name == "replace") {
    const Value count = arg(args, 2, "count", Value(-1));
    return Value(replace_all(s, need_string(arg(args, 0, "old"), "replace"), need_string(arg(args, 1, "new"), "replace"),
                             need_int(count, "replace count"), in));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "count") {
    const std::string& sub = need_string(arg(args, 0, "sub"), name.c_str());
    if (name == "count") {
      if (sub.empty()) return Value(static_cast<int64_t>(utf8_length(s) + 1));
      int64_t n = 0;
      for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      return Value(n);
    }
    const size_t p = name == "rfind" ? s.rfind(sub) : s.find(sub);
    if (p == std::string::npos) {
      if (name == "index") fail("jinja: substring not found");
      return Value(-1);
    }
    return Value(static_cast<int64_t>(utf8_length(s.substr(0, p))));
  }
  if (name == "join") {
    std::string out;
    bool first = true;
    for (const Value& item : in.iterate(arg(args, 0, "iterable"))) {
      if (!first) out += s;
      first = false;
      out += need_string(item, "join");
      in.check_string(out.size());
    }
    return Value(std::move(out));
  }
  if (name == "format") return Value(py_format(s, args));
  if (name == "splitlines") {
    std::vector<Value> out;
    for (auto& l : split_lines(s)) out.emplace_back(std::move(l));
    return make_list(in, std::move(out));
  }
  auto all = [&](auto pred) { return Value(!s.empty() && std::all_of(s.begin(), s.end(), pred)); };
  if (name == "isdigit") return all([](char c) { return c >= '0' && c <= '9'; });
  if (name == "isalpha") return all([](char c) { return is_alpha(c); });
  if (name == "isalnum") return all([](char c) { return is_alpha(c) || (c >= '0' && c <= '9'); });
  if (name == "isspace") return all([](char c) { return ascii_space(static_cast<unsigned char>(c)); });
  if (name == "islower") return Value(lower(s) == s && upper(s) != s);
  if (name == "isupper") return Value(upper(s) == s && lower(s) != s);
  fail("jinja: str has no method '", name, "'");
}

}  // namespace

Value call_method(Interpreter& in, const Value& obj, const std::string& name, Args& args) {
  in.step();
  if (obj.is_string()) return string_method(in, obj.as_string(), name, args);
  const bool immutable = in.options().chat;
  auto refuse = [&]() -> Value {
    fail("jinja: access to attribute '", name, "' of '", obj.type_name(), "' is unsafe (the sandbox is immutable)");
  };
  if (obj.is_dict()) {
    Dict& d = *obj.as_dict();
    if (name == "get") {
      const Value* v = d.find(arg(args, 0, "key"));
      return v ? *v : arg(args, 1, "default", Value::none());
    }
    if (name == "items") return make_list(in, items_of(in, obj));
    if (name == "keys" || name == "values") {
      std::vector<Value> out;
      for (const auto& kv : d.items) out.push_back(name == "keys" ? kv.first : kv.second);
      return make_list(in, std::move(out));
    }
    if (name == "copy") {
      auto c = in.heap().dict();
      *c = d;
      return Value(c);
    }
    if (immutable) return refuse();
    if (name == "pop") {
      const Value key = arg(args, 0, "key");
      const Value* v = d.find(key);
      if (!v) {
        if (args.positional.size() > 1) return args.positional[1];
        fail("jinja: KeyError: ", key.repr());
      }
      Value out = *v;
      (void)d.erase(key);
      return out;
    }
    if (name == "update") {
      const Value other = arg(args, 0, "other", Value::none());
      if (other.is_dict())
        for (const auto& kv : other.as_dict()->items) d.set(kv.first, kv.second);
      for (auto& [k, v] : args.keyword) d.set(Value(k), v);
      return Value::none();
    }
    if (name == "setdefault") {
      const Value key = arg(args, 0, "key");
      if (const Value* v = d.find(key)) return *v;
      d.set(key, arg(args, 1, "default", Value::none()));
      return *d.find(key);
    }
    if (name == "clear") {
      d.items.clear();
      d.index.clear();
      return Value::none();
    }
  }
  if (obj.is_list()) {
    List& l = *obj.as_list();
    if (name == "index" || name == "count") {
      const Value x = arg(args, 0, "value");
      int64_t n = 0;
      for (size_t i = 0; i < l.items.size(); ++i) {
        if (!values_equal(l.items[i], x)) continue;
        if (name == "index") return Value(static_cast<int64_t>(i));
        ++n;
      }
      if (name == "index") fail("jinja: ", x.repr(), " is not in list");
      return Value(n);
    }
    if (name == "copy") return make_list(in, l.items);
    if (immutable) return refuse();
    if (name == "append") {
      in.step();
      if (l.items.size() >= in.options().limits.max_string_bytes / sizeof(Value)) fail("jinja: list too long");
      l.items.push_back(arg(args, 0, "object"));
      return Value::none();
    }
    if (name == "extend") {
      for (const Value& v : in.iterate(arg(args, 0, "iterable"))) {
        in.step();
        l.items.push_back(v);
      }
      return Value::none();
    }
    if (name == "pop") {
      if (l.items.empty()) fail("jinja: pop from empty list");
      int64_t i = need_int(arg(args, 0, "index", Value(-1)), "pop index");
      if (i < 0) i += static_cast<int64_t>(l.items.size());
      if (i < 0 || i >= static_cast<int64_t>(l.items.size())) fail("jinja: pop index out of range");
      Value out = l.items[static_cast<size_t>(i)];
      l.items.erase(l.items.begin() + i);
      return out;
    }
    if (name == "insert") {
      int64_t i = need_int(arg(args, 0, "index"), "insert index");
      const int64_t n = static_cast<int64_t>(l.items.size());
      if (i < 0) i = std::max<int64_t>(0, i + n);
      i = std::min(i, n);
      l.items.insert(l.items.begin() + i, arg(args, 1, "object"));
      return Value::none();
    }
    if (name == "remove") {
      const Value x = arg(args, 0, "value");
      for (size_t i = 0; i < l.items.size(); ++i)
        if (values_equal(l.items[i], x)) {
          l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(i));
          return Value::none();
        }
      fail("jinja: list.remove(x): x not in list");
    }
    if (name == "reverse") {
      std::reverse(l.items.begin(), l.items.end());
      return Value::none();
    }
    if (name == "sort") {
      const bool reverse = arg(args, 1, "reverse", Value(false)).truthy();
      std::stable_sort(l.items.begin(), l.items.end(), [&](const Value& a, const Value& b) {
        return reverse ? values_less(b, a) : values_less(a, b);
      });
      return Value::none();
    }
    if (name == "clear") {
      l.items.clear();
      return Value::none();
    }
  }
  fail("jinja: '", obj.type_name(), "' has no method '", name, "'");
}

}  // namespace pagoda::jinja

