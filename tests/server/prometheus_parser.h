// A strict reader of Prometheus text exposition format 0.0.4 for tests: it rejects what
// the spec rejects (bad names, bad escapes, samples of undeclared families, duplicate
// HELP/TYPE, a family split in two) instead of guessing, and returns the samples.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace pagoda::testing {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;  // unescaped values
  double value = 0;
};

struct PromFamily {
  std::string type;  // counter, gauge, histogram, summary, untyped
  std::string help;
  std::vector<PromSample> samples;
};

class PromParser {
 public:
  // Throws std::runtime_error naming the line on anything malformed.
  static std::map<std::string, PromFamily> parse(const std::string& text) {
    PromParser p;
    std::istringstream in(text);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      try {
        p.line(line);
      } catch (const std::runtime_error& e) {
        throw std::runtime_error("line " + std::to_string(number) + ": " + e.what() + ": " + line);
      }
    }
    if (!text.empty() && text.back() != '\n') throw std::runtime_error("text must end with a newline");
    return p.families_;
  }

 private:
  static bool name_char(char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
  }
  static std::string read_name(const std::string& s, size_t& i, bool label) {
    const size_t start = i;
    while (i < s.size() && name_char(s[i], i == start) && !(label && s[i] == ':')) ++i;
    if (i == start) throw std::runtime_error("expected a name");
    return s.substr(start, i - start);
  }
  static double read_value(const std::string& text) {
    if (text == "+Inf") return INFINITY;
    if (text == "-Inf") return -INFINITY;
    if (text == "NaN") return NAN;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || text.find_first_of("iInN") != std::string::npos)
      throw std::runtime_error("bad value '" + text + "'");
    return v;
  }
  // The family a sample name belongs to, given the declared types.
  std::string family_of(const std::string& name) const {
    if (families_.count(name)) return name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
        const std::string base = name.substr(0, name.size() - s.size());
        auto it = families_.find(base);
        if (it != families_.end() && (it->second.type == "histogram" || it->second.type == "summary"))
          return base;
      }
    }
    throw std::runtime_error("sample of an undeclared family");
  }
  void enter(const std::string& family) {
    if (family == current_) return;
    if (done_.count(family)) throw std::runtime_error("family " + family + " appears twice");
    if (!current_.empty()) done_.insert(current_);
    current_ = family;
  }

  void line(const std::string& s) {
    if (s.empty()) return;
    if (s[0] == '#') return comment(s);
    size_t i = 0;
    PromSample sample;
    sample.name = read_name(s, i, false);
    if (i < s.size() && s[i] == '{') {
      ++i;
      while (i < s.size() && s[i] != '}') {
        const std::string key = read_name(s, i, true);
        if (s.compare(i, 2, "=\"") != 0) throw std::runtime_error("expected =\" after label name");
        i += 2;
        std::string value;
        for (;; ++i) {
          if (i >= s.size()) throw std::runtime_error("unterminated label value");
          if (s[i] == '"') break;
          if (s[i] == '\\') {
            const char next = i + 1 < s.size() ? s[++i] : '\0';
            if (next == 'n') value += '\n';
            else if (next == '\\' || next == '"') value += next;
            else throw std::runtime_error("bad escape in label value");
          } else {
            value += s[i];
          }
        }
        ++i;
        if (!sample.labels.emplace(key, value).second) throw std::runtime_error("duplicate label");
        if (i < s.size() && s[i] == ',') ++i;
        else if (i >= s.size() || s[i] != '}') throw std::runtime_error("expected , or }");
      }
      if (i >= s.size()) throw std::runtime_error("unterminated label set");
      ++i;
    }
    if (i >= s.size() || s[i] != ' ') throw std::runtime_error("expected a space before the value");
    const std::string rest = s.substr(i + 1);
    if (rest.find(' ') != std::string::npos) throw std::runtime_error("timestamps are not expected");
    sample.value = read_value(rest);
    const std::string family = family_of(sample.name);
    enter(family);
    families_[family].samples.push_back(std::move(sample));
  }

  void comment(const std::string& s) {
    std::istringstream in(s);
    std::string hash, keyword, name;
    in >> hash >> keyword >> name;
    if (keyword != "HELP" && keyword != "TYPE") return;  // other comments are allowed
    size_t i = 0;
    if (read_name(name, i, false) != name) throw std::runtime_error("bad metric name");
    const size_t text_at = s.find(name) + name.size();
    std::string text = text_at < s.size() ? s.substr(text_at + 1) : "";
    enter(name);
    PromFamily& f = families_[name];
    if (keyword == "TYPE") {
      static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary", "untyped"};
      if (!kTypes.count(text)) throw std::runtime_error("unknown type");
      if (!f.type.empty()) throw std::runtime_error("second TYPE");
      if (!f.samples.empty()) throw std::runtime_error("TYPE after samples");
      f.type = text;
    } else {
      if (seen_help_.count(name)) throw std::runtime_error("second HELP");
      seen_help_.insert(name);
      f.help = text;
    }
  }

  std::map<std::string, PromFamily> families_;
  std::set<std::string> seen_help_;
  std::set<std::string> done_;
  std::string current_;
};

}  // namespace pagoda::testing
