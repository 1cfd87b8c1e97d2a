#include "io/hf_pipeline.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/uniset.h>
#include <unicode/unistr.h>

#include <cstdio>
#include <memory>

#include "core/error.h"
#include "io/utf8.h"

namespace pagoda {

namespace {

constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581

// The library normalizes with unicode-normalization-alignments, whose tables are those of
// Unicode 9.0: a later character has no decomposition and combining class 0. ICU's
// normalizers filtered to the characters of Unicode 9.0 treat them the same way (measured
// over every combining mark with tokenizers 0.22: known up to 9.0, unknown from 10.0).
const icu::Normalizer2& icu_normalizer(HfNormalizer::Kind kind) {
  struct Forms {
    icu::UnicodeSet unicode_9;
    std::unique_ptr<icu::FilteredNormalizer2> nfc, nfd, nfkc, nfkd;
  };
  static const Forms forms = [] {
    UErrorCode status = U_ZERO_ERROR;
    Forms f{icu::UnicodeSet(icu::UnicodeString(u"[:age=9.0:]"), status), {}, {}, {}, {}};
    f.unicode_9.freeze();
    const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
    const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
    const icu::Normalizer2* nfkc = icu::Normalizer2::getNFKCInstance(status);
    const icu::Normalizer2* nfkd = icu::Normalizer2::getNFKDInstance(status);
    if (U_FAILURE(status)) fail("tokenizer: ICU has no Unicode normalizers: ", u_errorName(status));
    f.nfc = std::make_unique<icu::FilteredNormalizer2>(*nfc, f.unicode_9);
    f.nfd = std::make_unique<icu::FilteredNormalizer2>(*nfd, f.unicode_9);
    f.nfkc = std::make_unique<icu::FilteredNormalizer2>(*nfkc, f.unicode_9);
    f.nfkd = std::make_unique<icu::FilteredNormalizer2>(*nfkd, f.unicode_9);
    return f;
  }();
  switch (kind) {
    case HfNormalizer::Kind::Nfd:
      return *forms.nfd;
    case HfNormalizer::Kind::Nfkc:
      return *forms.nfkc;
    case HfNormalizer::Kind::Nfkd:
      return *forms.nfkd;
    default:
      return *forms.nfc;
  }
}

std::string unicode_normalize(const std::string& text, HfNormalizer::Kind kind) {
  const icu::Normalizer2& n = icu_normalizer(kind);
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString u = icu::UnicodeString::fromUTF8(text);
  if (n.isNormalized(u, status) && U_SUCCESS(status)) return text;
  status = U_ZERO_ERROR;
  const icu::UnicodeString normalized = n.normalize(u, status);
  if (U_FAILURE(status)) fail("tokenizer: Unicode normalization failed: ", u_errorName(status));
  std::string out;
  normalized.toUTF8String(out);
  return out;
}

// Calls f(code point) for each character of valid UTF-8 text.
template <typename F>
void for_each_code_point(std::string_view text, F&& f) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_valid_length(text, i);
    f(utf8_decode(text, i, n));
    i += n;
  }
}

// Character by character, as the library lowercases (so no final-sigma context), with
// the full mapping (U+0130 -> "i\u0307").
std::string lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_code_point(text, [&](uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
      return;
    }
    icu::UnicodeString u(static_cast<UChar32>(cp));
    u.toLower(icu::Locale::getRoot());
    u.toUTF8String(out);
  });
  return out;
}

// The library decides what a mark is with Rust crates whose Unicode tables are old:
// StripAccents drops the combining marks (M*) of Unicode 9.0, BertNormalizer's accent
// stripping the nonspacing marks (Mn) of Unicode 8.0. By ICU's current categories and
// each character's age, plus the few characters whose category has changed since.
// (Measured over every code point with tokenizers 0.22.)
bool was_mark(uint32_t cp, bool nonspacing_only) {
  const auto c = static_cast<UChar32>(cp);
  if (nonspacing_only) {
    if (cp == 0x1734) return true;  // Mn in Unicode 8.0, Mc now
    if (cp == 0x1885 || cp == 0x1886 || cp == 0xA9BD || cp == 0x111C9) return false;
  } else {
    if (cp == 0x1CF2 || cp == 0x1CF3) return true;  // Mc in Unicode 9.0, Lo now
    if (cp == 0x111C9) return false;
  }
  const int8_t type = u_charType(c);
  const bool mark = nonspacing_only
                        ? type == U_NON_SPACING_MARK
                        : type == U_NON_SPACING_MARK || type == U_COMBINING_SPACING_MARK ||
                              type == U_ENCLOSING_MARK;
  if (!mark) return false;
  UVersionInfo age;
  u_charAge(c, age);
  return age[0] <= (nonspacing_only ? 8 : 9);
}

std::string strip_marks(std::string_view text, bool nonspacing_only) {
  std::string out;
  out.reserve(text.size());
  for_each_code_point(text, [&](uint32_t cp) {
    if (!was_mark(cp, nonspacing_only)) utf8_append(out, cp);
  });
  return out;
}

// Rust's char::is_whitespace: the White_Space property.
bool is_white_space(uint32_t cp) {
  return u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_WHITE_SPACE);
}

// What the library's BertNormalizer drops as control characters, tab, newline and CR
// excepted: Cc, Co and Cf, but not unassigned code points; and its Unicode tables are
// those of Unicode 8.0, so a format character assigned later (U+0890, U+13430..) stays.
// (Measured over every code point with tokenizers 0.22.)
bool is_bert_control(uint32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  const auto c = static_cast<UChar32>(cp);
  switch (u_charType(c)) {
    case U_CONTROL_CHAR:
    case U_PRIVATE_USE_CHAR:
      return true;
    case U_FORMAT_CHAR: {
      UVersionInfo age;
      u_charAge(c, age);
      return age[0] <= 8;
    }
    default:
      return false;
  }
}

std::string bert_clean_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_code_point(text, [&](uint32_t cp) {
    if (cp == 0 || cp == 0xFFFD || is_bert_control(cp)) return;
    if (is_white_space(cp)) {
      out += ' ';
    } else {
      utf8_append(out, cp);
    }
  });
  return out;
}

// The ranges the library's BertNormalizer counts as CJK ideographs (its second-to-last
// extension starts at U+2B920, not U+2B820: we follow the library).
bool is_chinese_char(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

std::string space_chinese_chars(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_code_point(text, [&](uint32_t cp) {
    const bool cjk = is_chinese_char(cp);
    if (cjk) out += ' ';
    utf8_append(out, cp);
    if (cjk) out += ' ';
  });
  return out;
}

// The WordPiece decoder's cleanup, applied to each token after its space is added.
std::string wordpiece_cleanup(std::string text) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},     {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},   {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
  };
  for (const auto& [from, to] : kRules) {
    if (text.find(from) != std::string::npos) text = replace_all(text, from, to);
  }
  return text;
}

}  // namespace

const std::string& hf_punctuation_class() {
  static const std::string pattern = [] {
    UErrorCode status = U_ZERO_ERROR;
    icu::UnicodeSet set(icu::UnicodeString(u"[[:P:]&[:age=8.0:]]"), status);
    if (U_FAILURE(status))
      fail("tokenizer: ICU cannot build the punctuation set: ", u_errorName(status));
    set.add(0x21, 0x2F).add(0x3A, 0x40).add(0x5B, 0x60).add(0x7B, 0x7E);
    set.add(0x166D).add(0x111C9);  // P* in Unicode 8.0, So and Mn since (measured, 0.22)
    std::string out = "[";
    char range[40];
    for (int32_t i = 0; i < set.getRangeCount(); ++i) {
      std::snprintf(range, sizeof(range), "\\x{%X}-\\x{%X}",
                    static_cast<unsigned>(set.getRangeStart(i)),
                    static_cast<unsigned>(set.getRangeEnd(i)));
      out += range;
    }
    return out + "]";
  }();
  return pattern;
}

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  if (from.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  for (size_t hit; (hit = text.find(from, pos)) != std::string_view::npos;
       pos = hit + from.size()) {
    out.append(text, pos, hit - pos).append(to);
  }
  return out.append(text.substr(pos));
}

std::string hf_normalize(std::string_view raw, const std::vector<HfNormalizer>& normalizers,
                         bool at_text_start) {
  std::string text = utf8_is_valid(raw) ? std::string(raw) : utf8_replace_invalid_bytes(raw);
  for (const HfNormalizer& n : normalizers) {
    switch (n.kind) {
      case HfNormalizer::Kind::Nfc:
      case HfNormalizer::Kind::Nfd:
      case HfNormalizer::Kind::Nfkc:
      case HfNormalizer::Kind::Nfkd:
        text = unicode_normalize(text, n.kind);
        break;
      case HfNormalizer::Kind::Prepend:
        if (!text.empty()) text.insert(0, n.content);
        break;
      case HfNormalizer::Kind::PrependIfAbsentAtStart:
        if (!at_text_start) break;
        [[fallthrough]];
      case HfNormalizer::Kind::PrependIfAbsent:
        if (!text.empty() && text.compare(0, n.content.size(), n.content) != 0) {
          text.insert(0, n.content);
        }
        break;
      case HfNormalizer::Kind::Replace:
        text = replace_all(text, n.pattern, n.content);
        break;
      case HfNormalizer::Kind::Lowercase:
        text = lowercase(text);
        break;
      case HfNormalizer::Kind::StripAccents:
        text = strip_marks(text, /*nonspacing_only=*/false);
        break;
      case HfNormalizer::Kind::BertStripAccents:
        text = strip_marks(text, /*nonspacing_only=*/true);
        break;
      case HfNormalizer::Kind::BertCleanText:
        text = bert_clean_text(text);
        break;
      case HfNormalizer::Kind::BertChineseChars:
        text = space_chinese_chars(text);
        break;
    }
  }
  return text;
}

std::string hf_decode_token(const HfPipeline& pipeline, std::string_view token, bool first) {
  // GCC 12 warns falsely (-Wrestrict) on " " + std::string, hence append.
  const auto spaced = [](std::string_view t) { return std::string(1, ' ').append(t); };
  if (pipeline.decode_none) return first ? std::string(token) : spaced(token);
  if (pipeline.decode_wordpiece) {
    std::string text;
    const std::string& prefix = pipeline.decode_wordpiece_prefix;
    if (first) {
      text = token;
    } else if (!prefix.empty() && token.substr(0, prefix.size()) == prefix) {
      text = token.substr(prefix.size());
    } else {
      text = spaced(token);
    }
    return pipeline.decode_wordpiece_cleanup ? wordpiece_cleanup(std::move(text)) : text;
  }
  if (pipeline.decode_metaspace) {
    return replace_all(token, kMetaspace, first && pipeline.decode_metaspace_drop_first ? "" : " ");
  }
  return std::string(token);
}

}  // namespace pagoda
