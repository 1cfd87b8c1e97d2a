#include "io/hf_unigram_scores.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace pagoda {

namespace {

// 1e0 .. 1e308, each correctly rounded (as Rust's literals in serde_json's table).
const std::array<double, 309>& powers_of_ten() {
  static const std::array<double, 309> table = [] {
    std::array<double, 309> t{};
    for (int i = 0; i < 309; ++i) t[i] = std::strtod(("1e" + std::to_string(i)).c_str(), nullptr);
    return t;
  }();
  return table;
}

// Records the raw text of every float at model.vocab[i][1].
class ScoreTexts final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::string> texts;

  bool null() override { return next_value(); }
  bool boolean(bool) override { return next_value(); }
  bool number_integer(number_integer_t) override { return next_value(); }
  bool number_unsigned(number_unsigned_t) override { return next_value(); }
  bool number_float(number_float_t, const string_t& s) override {
    if (at_score()) {
      const size_t i = stack_[2].index;
      if (texts.size() <= i) texts.resize(i + 1);
      texts[i] = s;
    }
    return next_value();
  }
  bool string(string_t&) override { return next_value(); }
  bool binary(binary_t&) override { return next_value(); }
  bool start_object(std::size_t) override {
    stack_.push_back({false, "", 0});
    return true;
  }
  bool key(string_t& k) override {
    stack_.back().key = k;
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return next_value();
  }
  bool start_array(std::size_t) override {
    stack_.push_back({true, "", 0});
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return next_value();
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    fail("tokenizer.json: ", e.what());
  }

 private:
  struct Frame {
    bool is_array;
    std::string key;  // objects: the member being read
    size_t index;     // arrays: the element being read
  };
  // A value ended: the enclosing array moves to its next element.
  bool next_value() {
    if (!stack_.empty() && stack_.back().is_array) ++stack_.back().index;
    return true;
  }
  [[nodiscard]] bool at_score() const {
    return stack_.size() == 4 && !stack_[0].is_array && stack_[0].key == "model" &&
           !stack_[1].is_array && stack_[1].key == "vocab" && stack_[2].is_array &&
           stack_[3].is_array && stack_[3].index == 1;
  }
  std::vector<Frame> stack_;
};

}  // namespace

std::optional<double> serde_json_f64(std::string_view s) {
  size_t i = 0;
  const bool negative = i < s.size() && s[i] == '-';
  if (negative) ++i;
  const auto digit = [&](size_t at) { return at < s.size() && s[at] >= '0' && s[at] <= '9'; };
  uint64_t significand = 0;
  int64_t exponent = 0;
  bool overflowed = false;  // further digits are dropped (integer part: they scale)
  const auto take = [&](bool after_point) {
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
    if (!overflowed && (significand > kMax / 10 || (significand == kMax / 10 && d > kMax % 10))) {
      overflowed = true;
    }
    if (overflowed) {
      if (!after_point) ++exponent;
    } else {
      significand = significand * 10 + d;
      if (after_point) --exponent;
    }
    ++i;
  };
  while (digit(i)) take(false);
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (digit(i)) take(true);
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) exp_negative = s[i++] == '-';
    int64_t e = 0;
    while (digit(i)) {
      e = std::min<int64_t>(e * 10 + (s[i++] - '0'), int64_t{1} << 40);
    }
    exponent += exp_negative ? -e : e;
  }
  double f = static_cast<double>(significand);
  const auto& pow10 = powers_of_ten();
  for (;;) {
    const uint64_t magnitude =
        exponent < 0 ? static_cast<uint64_t>(-exponent) : static_cast<uint64_t>(exponent);
    if (magnitude < pow10.size()) {
      if (exponent >= 0) {
        f *= pow10[magnitude];
        if (std::isinf(f)) return std::nullopt;
      } else {
        f /= pow10[magnitude];
      }
      break;
    }
    if (f == 0.0) break;
    if (exponent >= 0) return std::nullopt;
    f /= 1e308;
    exponent += 308;
  }
  return negative ? -f : f;
}

std::vector<std::string> unigram_score_texts(const std::string& tokenizer_json) {
  ScoreTexts sax;
  nlohmann::json::sax_parse(tokenizer_json, &sax);
  return std::move(sax.texts);
}

}  // namespace pagoda
