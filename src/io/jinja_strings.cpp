#include "io/jinja_strings.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "core/error.h"

namespace pagoda::jinja {

bool ascii_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

// Length of the Unicode whitespace code point (as Python's str.isspace) at s[i], or 0.
size_t space_at(const std::string& s, size_t i) {
  const unsigned char c = s[i];
  if (c < 0x80) return ascii_space(c) ? 1 : 0;
  static const char* const kSpaces[] = {"\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\xa8", "\xe2\x80\xa9",
                                        "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80"};
  for (const char* sp : kSpaces)
    if (s.compare(i, std::strlen(sp), sp) == 0) return std::strlen(sp);
  // U+2000..U+200A
  if (i + 2 < s.size() && c == 0xe2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
      static_cast<unsigned char>(s[i + 2]) <= 0x8a && static_cast<unsigned char>(s[i + 2]) >= 0x80)
    return 3;
  return 0;
}

size_t char_len(const std::string& s, size_t i) {
  const unsigned char c = s[i];
  const size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
  return std::min(n, s.size() - i);
}

// Start of the code point that ends just before position `end`.
size_t prev_char(const std::string& s, size_t end) {
  size_t i = end - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xc0) == 0x80 && end - i < 4) --i;
  return i;
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string py_title(const std::string& s) {
  std::string out = s;
  bool prev_cased = false;
  for (char& c : out) {
    if (is_alpha(c)) {
      c = prev_cased ? lower(std::string(1, c))[0] : upper(std::string(1, c))[0];
      prev_cased = true;
    } else {
      prev_cased = false;
    }
  }
  return out;
}

std::string capitalize(const std::string& s) {
  std::string out = lower(s);
  if (!out.empty()) out[0] = upper(out.substr(0, 1))[0];
  return out;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to, int64_t count,
                        Interpreter& in) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` between every character and at both ends.
    const auto chars = utf8_chars(s);
    int64_t done = 0;
    for (const auto& c : chars) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      out += c;
      in.check_string(out.size());
    }
    if (count < 0 || done < count) out += to;
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += to;
    pos = hit + from.size();
    ++done;
    in.check_string(out.size());
  }
  out.append(s, pos, std::string::npos);
  return out;
}

std::vector<std::string> py_split(const std::string& s, const Value& sep, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (sep.is_none() || sep.is_undefined()) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && space_at(s, i)) i += space_at(s, i);
      if (i >= s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        std::string rest = s.substr(i);
        parts.push_back(py_strip(rest, nullptr, false, true));
        break;
      }
      size_t j = i;
      while (j < s.size() && !space_at(s, j)) j += char_len(s, j);
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
    return parts;
  }
  if (!sep.is_string()) fail("jinja: split() separator must be a string or None");
  const std::string& d = sep.as_string();
  if (d.empty()) fail("jinja: empty separator");
  size_t pos = 0;
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    const size_t hit = s.find(d, pos);
    if (hit == std::string::npos) break;
    parts.push_back(s.substr(pos, hit - pos));
    pos = hit + d.size();
  }
  parts.push_back(s.substr(pos));
  return parts;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' || s[i] == '\r') {
      lines.push_back(s.substr(start, i - start));
      if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  return lines;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Python's str.format with {} / {0} / {name} fields and no format specs.
std::string py_format(const std::string& fmt, Args& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{') { out += '{'; ++i; continue; }
    if (c == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}') { out += '}'; ++i; continue; }
    if (c == '}') fail("jinja: format: single '}' encountered");
    if (c != '{') { out += c; continue; }
    const size_t close = fmt.find('}', i);
    if (close == std::string::npos) fail("jinja: format: single '{' encountered");
    const std::string field = fmt.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!.[") != std::string::npos) fail("jinja: format: format specs are not supported");
    const Value* v = nullptr;
    if (field.empty()) {
      if (auto_index >= args.positional.size()) fail("jinja: format: not enough arguments");
      v = &args.positional[auto_index++];
    } else if (std::all_of(field.begin(), field.end(), [](char d) { return d >= '0' && d <= '9'; })) {
      const size_t k = field.size() < 9 ? static_cast<size_t>(std::atoi(field.c_str())) : SIZE_MAX;
      if (k >= args.positional.size()) fail("jinja: format: index out of range");
      v = &args.positional[k];
    } else {
      for (auto& [name, val] : args.keyword)
        if (name == field) v = &val;
      if (!v) fail("jinja: format: missing argument '", field, "'");
    }
    out += v->str();
    i = close;
  }
  return out;
}

std::string py_strip(const std::string& s, const std::string* chars, bool left, bool right) {
  std::unordered_set<std::string> set;
  if (chars)
    for (auto& c : utf8_chars(*chars)) set.insert(c);
  auto strip_at = [&](size_t i) -> size_t {
    if (!chars) return space_at(s, i);
    const size_t n = char_len(s, i);
    return set.count(s.substr(i, n)) ? n : 0;
  };
  size_t begin = 0, end = s.size();
  if (left)
    while (begin < end) {
      const size_t n = strip_at(begin);
      if (!n) break;
      begin += n;
    }
  if (right)
    while (end > begin) {
      const size_t p = prev_char(s, end);
      if (!strip_at(p) || p < begin) break;
      end = p;
    }
  return s.substr(begin, end - begin);
}

}  // namespace pagoda::jinja
