#include "io/jinja_lexer.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace pagoda::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// jinja2 reads only \n, \r\n and \r as line breaks and drops one trailing newline.
std::string normalize_newlines(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(const std::string& source, const LexOptions& options)
      : s_(normalize_newlines(source)), options_(options) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < s_.size(); ++i)
      if (s_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    while (pos_ < s_.size()) {
      const size_t tag = find_tag(pos_);
      if (tag == std::string::npos) {
        emit(Tok::kData, s_.substr(pos_), pos_);
        break;
      }
      lex_tag(tag);
    }
    emit(Tok::kEof, "", s_.size());
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void error(size_t at, const std::string& what) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), at) - 1;
    fail("jinja: syntax error at line ", (it - line_starts_.begin()) + 1, ", column ", at - *it + 1, ": ", what);
  }

  void emit(Tok kind, std::string text, size_t at) {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), at) - 1;
    t.line = static_cast<int>(it - line_starts_.begin()) + 1;
    t.column = static_cast<int>(at - *it) + 1;
    tokens_.push_back(std::move(t));
  }

  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < s_.size(); ++i)
      if (s_[i] == '{' && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
    return std::string::npos;
  }

  bool at(size_t i, const char* text) const { return s_.compare(i, std::strlen(text), text) == 0; }
  size_t skip_space(size_t i) const {
    while (i < s_.size() && is_space(s_[i])) ++i;
    return i;
  }

  // Applies the tag's whitespace control to the data before it, as jinja2's OptionalLStrip.
  void emit_data(std::string text, size_t at, char sign, bool lstrip_applies) {
    if (sign == '-') {
      size_t end = text.size();
      while (end > 0 && is_space(text[end - 1])) --end;
      text.resize(end);
    } else if (sign != '+' && options_.lstrip_blocks && lstrip_applies) {
      const size_t nl = text.rfind('\n');
      const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting_) && l_pos < text.size() &&
          std::all_of(text.begin() + static_cast<std::ptrdiff_t>(l_pos), text.end(), is_space))
        text.resize(l_pos);
    }
    if (!text.empty()) emit(Tok::kData, std::move(text), at);
  }

  // Matches a block end at i ("+%}", "-%}\s*", "%}\n?"); returns its end or npos.
  size_t block_end(size_t i, char close) const {
    if (close == '%' && at(i, "+%}")) return i + 3;
    if (s_[i] == '-' && i + 2 < s_.size() && s_[i + 1] == close && s_[i + 2] == '}') return skip_space(i + 3);
    if (s_[i] == close && i + 1 < s_.size() && s_[i + 1] == '}') {
      size_t end = i + 2;
      if (close != '}' && options_.trim_blocks && end < s_.size() && s_[end] == '\n') ++end;
      return end;
    }
    return std::string::npos;
  }

  void finish_match(size_t end) {
    line_starting_ = end > 0 && s_[end - 1] == '\n';
    pos_ = end;
  }

  void lex_tag(size_t tag) {
    const char kind = s_[tag + 1];
    size_t i = tag + 2;
    const char sign = (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) ? s_[i++] : 0;
    std::string text = s_.substr(pos_, tag - pos_);
    if (kind == '%' && lex_raw(tag, i, sign, text)) return;
    emit_data(std::move(text), pos_, sign, kind != '{');
    if (kind == '#') return lex_comment(tag, i);
    emit(kind == '{' ? Tok::kVarBegin : Tok::kBlockBegin, "", tag);
    lex_expression(tag, i, kind == '{' ? '}' : '%');
  }

  bool lex_raw(size_t tag, size_t i, char sign, std::string& text) {
    size_t j = skip_space(i);
    if (!at(j, "raw") || (j + 3 < s_.size() && is_name_char(s_[j + 3]))) return false;
    j = skip_space(j + 3);
    size_t begin_end;
    if (at(j, "-%}")) begin_end = skip_space(j + 3);
    else if (at(j, "%}")) begin_end = j + 2;
    else return false;
    emit_data(std::move(text), pos_, sign, true);
    line_starting_ = s_[begin_end - 1] == '\n';
    for (size_t p = begin_end; p + 1 < s_.size(); ++p) {
      if (!at(p, "{%")) continue;
      size_t q = p + 2;
      const char end_sign = (q < s_.size() && (s_[q] == '-' || s_[q] == '+')) ? s_[q++] : 0;
      q = skip_space(q);
      if (!at(q, "endraw")) continue;
      q = skip_space(q + 6);
      if (q >= s_.size()) continue;
      const size_t end = block_end(q, '%');
      if (end == std::string::npos) continue;
      emit_data(s_.substr(begin_end, p - begin_end), begin_end, end_sign, true);
      finish_match(end);
      return true;
    }
    error(tag, "missing end of raw directive");
  }

  void lex_comment(size_t tag, size_t i) {
    for (size_t p = i; p + 1 < s_.size(); ++p) {
      if (s_[p] == '+' && at(p + 1, "#}")) return finish_match(p + 3);
      if (s_[p] == '-' && at(p + 1, "#}")) return finish_match(skip_space(p + 3));
      if (at(p, "#}")) {
        size_t end = p + 2;
        if (options_.trim_blocks && end < s_.size() && s_[end] == '\n') ++end;
        return finish_match(end);
      }
    }
    error(tag, "missing end of comment tag");
  }

  void lex_expression(size_t tag, size_t i, char close) {
    std::vector<char> balance;
    while (true) {
      i = skip_space(i);
      if (i >= s_.size()) error(tag, close == '}' ? "unexpected end of template, expected '}}'" : "unexpected end of template, expected '%}'");
      if (balance.empty()) {
        const size_t end = block_end(i, close);
        if (end != std::string::npos) {
          emit(close == '}' ? Tok::kVarEnd : Tok::kBlockEnd, "", i);
          return finish_match(end);
        }
      }
      i = lex_token(i, balance);
    }
  }

  size_t lex_token(size_t i, std::vector<char>& balance) {
    const char c = s_[i];
    if (is_digit(c)) return lex_number(i);
    if (is_name_start(c)) {
      size_t j = i;
      while (j < s_.size() && is_name_char(s_[j])) ++j;
      emit(Tok::kName, s_.substr(i, j - i), i);
      return j;
    }
    if (c == '\'' || c == '"') return lex_string(i);
    static const char* const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo)
      if (at(i, op)) {
        emit(Tok::kOp, op, i);
        return i + 2;
      }
    if (std::strchr("+-/*%~[](){}><=.:|,;", c) == nullptr || c == 0) error(i, std::string("unexpected char '") + c + "'");
    if (c == '(' || c == '[' || c == '{') balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    if (c == ')' || c == ']' || c == '}') {
      if (balance.empty()) error(i, std::string("unexpected '") + c + "'");
      if (balance.back() != c) error(i, std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
      balance.pop_back();
    }
    emit(Tok::kOp, std::string(1, c), i);
    return i + 1;
  }

  // Digits with optional '_' separators between them.
  size_t digits(size_t i, int (*digit)(char)) const {
    if (i >= s_.size() || digit(s_[i]) < 0) return i;
    ++i;
    while (i < s_.size()) {
      if (digit(s_[i]) >= 0) ++i;
      else if (s_[i] == '_' && i + 1 < s_.size() && digit(s_[i + 1]) >= 0) i += 2;
      else break;
    }
    return i;
  }

  static int dec(char c) { return is_digit(c) ? c - '0' : -1; }
  static int bin(char c) { return c == '0' || c == '1' ? c - '0' : -1; }
  static int oct(char c) { return c >= '0' && c <= '7' ? c - '0' : -1; }

  size_t lex_number(size_t i) {
    const bool after_dot = i > 0 && s_[i - 1] == '.';
    const size_t int_end = digits(i, dec);
    if (!after_dot) {
      size_t j = int_end;
      bool is_float = false;
      if (j + 1 < s_.size() && s_[j] == '.' && is_digit(s_[j + 1])) {
        j = digits(j + 1, dec);
        is_float = true;
      }
      if (j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
        size_t k = j + 1;
        if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
        const size_t e_end = digits(k, dec);
        if (e_end > k) {
          j = e_end;
          is_float = true;
        }
      }
      if (is_float) {
        std::string text;
        for (size_t k = i; k < j; ++k)
          if (s_[k] != '_') text += s_[k];
        emit(Tok::kFloat, text, i);
        tokens_.back().float_value = std::strtod(text.c_str(), nullptr);
        return j;
      }
    }
    int base = 10;
    size_t start = i, end;
    if (s_[i] == '0' && i + 1 < s_.size() && (s_[i + 1] == 'b' || s_[i + 1] == 'B') && bin(i + 2 < s_.size() ? s_[i + 2] : 'x') >= 0) {
      base = 2;
      start = i + 2;
      end = digits(start, bin);
    } else if (s_[i] == '0' && i + 1 < s_.size() && (s_[i + 1] == 'o' || s_[i + 1] == 'O') && oct(i + 2 < s_.size() ? s_[i + 2] : 'x') >= 0) {
      base = 8;
      start = i + 2;
      end = digits(start, oct);
    } else if (s_[i] == '0' && i + 1 < s_.size() && (s_[i + 1] == 'x' || s_[i + 1] == 'X') && hex_value(i + 2 < s_.size() ? s_[i + 2] : 'x') >= 0) {
      base = 16;
      start = i + 2;
      end = digits(start, hex_value);
    } else if (s_[i] == '0') {
      end = i + 1;  // "0(_?0)*": a leading zero takes only zeros
      while (end < s_.size() && (s_[end] == '0' || (s_[end] == '_' && end + 1 < s_.size() && s_[end + 1] == '0'))) ++end;
    } else {
      end = int_end;
    }
    uint64_t value = 0;
    for (size_t k = start; k < end; ++k) {
      if (s_[k] == '_') continue;
      const int d = hex_value(s_[k]);
      if (value > (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base))
        error(i, "integer literal too large");
      value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    }
    emit(Tok::kInt, s_.substr(i, end - i), i);
    tokens_.back().int_value = static_cast<int64_t>(value);
    return end;
  }

  // Python's unicode-escape decoding, which jinja2 applies to string literals.
  size_t lex_string(size_t i) {
    const char quote = s_[i];
    std::string out;
    size_t j = i + 1;
    for (;; ++j) {
      if (j >= s_.size()) error(i, "unexpected end of string literal");
      const char c = s_[j];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (++j >= s_.size()) error(i, "unexpected end of string literal");
      const char e = s_[j];
      switch (e) {
        case '\n': break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x': case 'u': case 'U': {
          const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int k = 0; k < n; ++k) {
            const int d = j + 1 < s_.size() ? hex_value(s_[j + 1]) : -1;
            if (d < 0) error(j, std::string("truncated \\") + e + " escape in string literal");
            cp = cp * 16 + static_cast<uint32_t>(d);
            ++j;
          }
          if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) error(j, "invalid code point in string literal");
          append_utf8(cp, out);
          break;
        }
        default:
          if (oct(e) >= 0) {
            uint32_t cp = static_cast<uint32_t>(oct(e));
            for (int k = 0; k < 2 && j + 1 < s_.size() && oct(s_[j + 1]) >= 0; ++k) cp = cp * 8 + static_cast<uint32_t>(oct(s_[++j]));
            append_utf8(cp, out);
          } else if (e == 'N') {
            error(j, "\\N{...} escapes are not supported");
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    emit(Tok::kString, std::move(out), i);
    return j + 1;
  }

  std::string s_;
  LexOptions options_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool line_starting_ = true;
};

}  // namespace

std::vector<Token> lex(const std::string& source, const LexOptions& options) {
  return Lexer(source, options).run();
}

}  // namespace pagoda::jinja
