#include "io/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <memory>

#include "core/error.h"

namespace pagoda {

namespace {

// PCRE2's \s (with UCP) lacks U+0085 NEXT LINE, which is White_Space in Unicode and so
// whitespace to llama.cpp and to the Oniguruma regexes of Hugging Face tokenizers: the
// patterns below spell whitespace as [\s\x{85}] (and its complement as [^\s\x{85}]).
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\x{85}\p{L}\p{N}]+)"
    R"(|[\s\x{85}]+(?![^\s\x{85}])|[\s\x{85}]+)";

constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))"
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\x{85}\p{L}\p{N}]+[\r\n]*)"
    R"(|[\s\x{85}]*[\r\n]+|[\s\x{85}]+(?![^\s\x{85}])|[\s\x{85}]+)";

constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))"
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\x{85}\p{L}\p{N}]+[\r\n]*)"
    R"(|[\s\x{85}]*[\r\n]+|[\s\x{85}]+(?![^\s\x{85}])|[\s\x{85}]+)";

bool is_one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

std::optional<PreTokenizerSpec> find_pre_tokenizer(std::string_view name) {
  PreTokenizerSpec spec;
  if (name.empty() || name == "default") {
    // llama.cpp's fallback for BPE files that name no pre-tokenizer.
    spec.regexes = {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"};
  } else if (is_one_of(name, {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1",
                              "pixtral"})) {
    spec.regexes = {kLlama3};
    spec.ignore_merges = true;
    spec.add_bos = true;
  } else if (is_one_of(name, {"dbrx", "smaug-bpe"})) {
    spec.regexes = {kLlama3};
  } else if (is_one_of(name, {"gpt-2", "phi-2", "mpt", "olmo", "jais"})) {
    spec.regexes = {kGpt2};
  } else if (is_one_of(name, {"smollm", "command-r"})) {
    // Digits one by one (Hugging Face's Digits(individual_digits=true)), then GPT-2.
    spec.regexes = {R"(\p{N})", kGpt2};
    spec.clean_spaces = false;
  } else if (is_one_of(name, {"starcoder", "refact", "codeshell", "exaone", "minerva-7b"})) {
    spec.regexes = {R"(\p{N})", kGpt2};
  } else if (is_one_of(name, {"qwen2", "deepseek-r1-qwen"})) {
    spec.regexes = {kQwen2};
    spec.clean_spaces = false;
  } else if (is_one_of(name, {"stablelm2", "megrez"})) {
    spec.regexes = {kQwen2};
  } else {
    return std::nullopt;
  }
  return spec;
}

namespace {

std::vector<SplitRule> isolated(const std::vector<std::string>& patterns) {
  std::vector<SplitRule> rules;
  for (const std::string& p : patterns) rules.push_back({p, SplitBehavior::Isolated});
  return rules;
}

}  // namespace

RegexSplitter::RegexSplitter(const std::vector<std::string>& patterns)
    : RegexSplitter(isolated(patterns)) {}

RegexSplitter::RegexSplitter(const std::vector<SplitRule>& rules) {
  codes_.reserve(rules.size());  // so that push_back below cannot throw and leak a code
  behaviors_.reserve(rules.size());
  for (const SplitRule& rule : rules) {
    const std::string& pattern = rule.regex;
    behaviors_.push_back(rule.behavior);
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error, &error_offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof(message));
      // The destructor does not run for a constructor that throws: free the codes so far.
      for (void* compiled : codes_) pcre2_code_free(static_cast<pcre2_code*>(compiled));
      codes_.clear();
      fail("tokenizer: pre-tokenizer regex does not compile at offset ", error_offset, ": ",
           reinterpret_cast<const char*>(message), " (", pattern, ")");
    }
    // Without JIT (not built in, or no executable memory) the interpreter still works.
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    codes_.push_back(code);
  }
}

// As Hugging Face's SplitDelimiterBehavior: a match merges into the gap just before
// (MergedWithPrevious) or just after it (MergedWithNext), never into another match.
void RegexSplitter::combine(SplitBehavior behavior,
                            const std::vector<std::pair<std::pair<uint32_t, uint32_t>, bool>>& segments,
                            std::vector<std::pair<uint32_t, uint32_t>>& out) {
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const auto& [range, is_match] : segments) out.push_back(range);
      return;
    case SplitBehavior::Removed:
      for (const auto& [range, is_match] : segments) {
        if (!is_match) out.push_back(range);
      }
      return;
    case SplitBehavior::MergedWithPrevious: {
      const size_t first = out.size();
      bool previous_match = false;
      for (const auto& [range, is_match] : segments) {
        if (is_match && !previous_match && out.size() > first) {
          out.back().second = range.second;
        } else {
          out.push_back(range);
        }
        previous_match = is_match;
      }
      return;
    }
    case SplitBehavior::MergedWithNext: {
      const size_t first = out.size();
      bool next_match = false;
      for (size_t i = segments.size(); i-- > 0;) {
        const auto& [range, is_match] = segments[i];
        if (is_match && !next_match && out.size() > first) {
          out.back().first = range.first;
        } else {
          out.push_back(range);
        }
        next_match = is_match;
      }
      std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
      return;
    }
  }
}

RegexSplitter::~RegexSplitter() {
  for (void* code : codes_) pcre2_code_free(static_cast<pcre2_code*>(code));
}

void RegexSplitter::split(std::string_view text,
                          std::vector<std::pair<uint32_t, uint32_t>>& pieces) const {
  pieces.clear();
  if (text.empty()) return;
  pieces.emplace_back(0, static_cast<uint32_t>(text.size()));
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
  if (!match) fail("tokenizer: out of memory for regex match data");
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::vector<std::pair<uint32_t, uint32_t>> next;
  // (begin, end, is_match) of one piece, before the behavior combines them.
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, bool>> segments;
  for (size_t step = 0; step < codes_.size(); ++step) {
    auto* code = static_cast<pcre2_code*>(codes_[step]);
    const SplitBehavior behavior = behaviors_[step];
    next.clear();
    next.reserve(pieces.size() * 2);
    for (const auto& [begin, end] : pieces) {
      // The subject ends at the piece's end, so that lookaheads see the piece's end as
      // the end of the text, as in llama.cpp and Hugging Face (which split piece by piece).
      size_t pos = begin;
      size_t gap = begin;
      segments.clear();
      while (pos < end) {
        int rc = pcre2_match(code, subject, end, pos, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
          rc = pcre2_match(code, subject, end, pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                           match.get(), nullptr);
        }
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) fail("tokenizer: pre-tokenizer regex failed with PCRE2 error ", rc);
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
        const size_t m_begin = ovector[0];
        const size_t m_end = ovector[1];
        if (m_end == m_begin) {
          // An empty match splits nothing: step over one code point and go on.
          pos = m_begin + 1;
          while (pos < end && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
          continue;
        }
        if (m_begin > gap) segments.push_back({{static_cast<uint32_t>(gap), static_cast<uint32_t>(m_begin)}, false});
        segments.push_back({{static_cast<uint32_t>(m_begin), static_cast<uint32_t>(m_end)}, true});
        gap = pos = m_end;
      }
      if (end > gap) segments.push_back({{static_cast<uint32_t>(gap), end}, false});
      combine(behavior, segments, next);
    }
    pieces.swap(next);
  }
}

}  // namespace pagoda
