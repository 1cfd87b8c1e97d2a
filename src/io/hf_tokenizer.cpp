// load_hf_tokenizer: maps a tokenizer.json (model, normalizer, pre_tokenizer, decoder,
// post_processor, added_tokens) and tokenizer_config.json into a VocabData for
// make_tokenizer. Each supported component is translated; anything else is an Error.
#include "io/hf_tokenizer.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/hf_pipeline.h"
#include "io/hf_unigram_scores.h"
#include "io/vocab.h"

namespace pagoda {

namespace {

using Json = nlohmann::json;

constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581

// Oniguruma (the `tokenizers` regex engine) -> PCRE2: \s there includes U+0085, which
// PCRE2's \s lacks; and the case-insensitive contraction group is spelt out, because with
// UCP PCRE2 would also fold U+017F (long s) and U+212A (Kelvin) into it.
std::string translate_regex(const std::string& pattern) {
  std::string p = pattern;
  const std::string contractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
  const std::string explicit_form = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
  for (size_t at; (at = p.find(contractions)) != std::string::npos;) {
    p.replace(at, contractions.size(), explicit_form);
  }
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[i + 1];
      if (e == 's') {
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      } else if (e == 'S') {
        if (in_class) fail("tokenizer.json: \\S inside a character class is not supported (", pattern, ")");
        out += "[^\\s\\x{85}]";
      } else {
        out += c;
        out += e;
      }
      ++i;
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

std::string escape_literal(const std::string& text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80 && !std::isalnum(u)) out += '\\';
    out += c;
  }
  return out;
}

const Json& member(const Json& j, const char* key, const char* where) {
  if (!j.is_object() || !j.contains(key)) fail("tokenizer.json: ", where, " has no '", key, "'");
  return j.at(key);
}

std::string type_of(const Json& j, const char* where) {
  const Json& t = member(j, "type", where);
  if (!t.is_string()) fail("tokenizer.json: ", where, " 'type' is not a string");
  return t.get<std::string>();
}

bool flag(const Json& j, const char* key, bool fallback) {
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  if (!j.at(key).is_boolean()) fail("tokenizer.json: '", key, "' is not a boolean");
  return j.at(key).get<bool>();
}

std::string string_pattern(const Json& pattern, const char* where, bool* is_regex) {
  if (pattern.is_object() && pattern.contains("String") && pattern.at("String").is_string()) {
    *is_regex = false;
    return pattern.at("String").get<std::string>();
  }
  if (pattern.is_object() && pattern.contains("Regex") && pattern.at("Regex").is_string()) {
    *is_regex = true;
    return pattern.at("Regex").get<std::string>();
  }
  fail("tokenizer.json: ", where, " pattern is neither {\"String\"} nor {\"Regex\"}");
}

void add_normalizer(const Json& n, HfPipeline& hf) {
  if (n.is_null()) return;
  const std::string type = type_of(n, "normalizer");
  if (type == "Sequence") {
    const Json& list = member(n, "normalizers", "Sequence normalizer");
    if (!list.is_array()) fail("tokenizer.json: Sequence normalizer's list is not an array");
    for (const Json& step : list) add_normalizer(step, hf);
  } else if (type == "NFC") {
    hf.normalizers.push_back({HfNormalizer::Kind::Nfc, "", ""});
  } else if (type == "NFD") {
    hf.normalizers.push_back({HfNormalizer::Kind::Nfd, "", ""});
  } else if (type == "NFKC") {
    hf.normalizers.push_back({HfNormalizer::Kind::Nfkc, "", ""});
  } else if (type == "NFKD") {
    hf.normalizers.push_back({HfNormalizer::Kind::Nfkd, "", ""});
  } else if (type == "Lowercase") {
    hf.normalizers.push_back({HfNormalizer::Kind::Lowercase, "", ""});
  } else if (type == "StripAccents") {
    hf.normalizers.push_back({HfNormalizer::Kind::StripAccents, "", ""});
  } else if (type == "BertNormalizer") {
    const bool lowercase = flag(n, "lowercase", true);
    if (flag(n, "clean_text", true)) hf.normalizers.push_back({HfNormalizer::Kind::BertCleanText, "", ""});
    if (flag(n, "handle_chinese_chars", true)) {
      hf.normalizers.push_back({HfNormalizer::Kind::BertChineseChars, "", ""});
    }
    // strip_accents null follows lowercase, as in the library.
    if (flag(n, "strip_accents", lowercase)) {
      hf.normalizers.push_back({HfNormalizer::Kind::Nfd, "", ""});
      hf.normalizers.push_back({HfNormalizer::Kind::BertStripAccents, "", ""});
    }
    if (lowercase) hf.normalizers.push_back({HfNormalizer::Kind::Lowercase, "", ""});
  } else if (type == "Precompiled") {
    // SentencePiece's compiled normalization rules (a double-array trie of replacements);
    // NFKC is close but not the same, so we refuse rather than approximate.
    fail("tokenizer.json: normalizer 'Precompiled' (a SentencePiece precompiled_charsmap) "
         "is not supported");
  } else if (type == "Prepend") {
    const Json& p = member(n, "prepend", "Prepend normalizer");
    if (!p.is_string()) fail("tokenizer.json: Prepend normalizer's 'prepend' is not a string");
    hf.normalizers.push_back({HfNormalizer::Kind::Prepend, "", p.get<std::string>()});
  } else if (type == "Replace") {
    bool is_regex = false;
    std::string pattern = string_pattern(member(n, "pattern", "Replace normalizer"),
                                         "Replace normalizer", &is_regex);
    if (is_regex) fail("tokenizer.json: Replace normalizer with a Regex pattern is not supported");
    const Json& content = member(n, "content", "Replace normalizer");
    if (!content.is_string()) fail("tokenizer.json: Replace normalizer's 'content' is not a string");
    hf.normalizers.push_back({HfNormalizer::Kind::Replace, pattern, content.get<std::string>()});
  } else {
    fail("tokenizer.json: normalizer '", type, "' is not supported");
  }
}

SplitBehavior split_behavior(const std::string& b) {
  if (b == "Isolated") return SplitBehavior::Isolated;
  if (b == "Removed") return SplitBehavior::Removed;
  if (b == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::MergedWithNext;
  fail("tokenizer.json: Split behavior '", b, "' is not supported");
}

// Rust's char::is_whitespace (Unicode White_Space), as a PCRE2 class.
constexpr std::string_view kWhiteSpace =
    R"([\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}])";
// GPT-2's regex, which the ByteLevel pre-tokenizer applies when use_regex is true.
constexpr const char* kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

void add_pre_tokenizer(const Json& p, HfPipeline& hf) {
  if (p.is_null()) return;
  const std::string type = type_of(p, "pre_tokenizer");
  if (type == "Sequence") {
    const Json& list = member(p, "pretokenizers", "Sequence pre_tokenizer");
    if (!list.is_array()) fail("tokenizer.json: Sequence pre_tokenizer's list is not an array");
    for (const Json& step : list) add_pre_tokenizer(step, hf);
  } else if (type == "Split") {
    bool is_regex = false;
    const std::string pattern =
        string_pattern(member(p, "pattern", "Split pre_tokenizer"), "Split pre_tokenizer", &is_regex);
    if (flag(p, "invert", false)) fail("tokenizer.json: Split pre_tokenizer with invert is not supported");
    const Json& behavior = member(p, "behavior", "Split pre_tokenizer");
    if (!behavior.is_string()) fail("tokenizer.json: Split behavior is not a string");
    if (hf.byte_level) fail("tokenizer.json: a Split after the ByteLevel pre_tokenizer is not supported");
    hf.splits.push_back({is_regex ? translate_regex(pattern) : escape_literal(pattern),
                         split_behavior(behavior.get<std::string>())});
  } else if (type == "BertPreTokenizer") {
    // Whitespace removed, then each punctuation character (Unicode P* or ASCII) alone.
    hf.splits.push_back({std::string(kWhiteSpace) + "+", SplitBehavior::Removed});
    hf.splits.push_back({hf_punctuation_class(), SplitBehavior::Isolated});
  } else if (type == "WhitespaceSplit") {
    hf.splits.push_back({std::string(kWhiteSpace) + "+", SplitBehavior::Removed});
  } else if (type == "Punctuation") {
    const std::string behavior = p.contains("behavior") && p.at("behavior").is_string()
                                     ? p.at("behavior").get<std::string>()
                                     : "Isolated";
    hf.splits.push_back({hf_punctuation_class(), split_behavior(behavior)});
  } else if (type == "Digits") {
    hf.splits.push_back({flag(p, "individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)",
                         SplitBehavior::Isolated});
  } else if (type == "ByteLevel") {
    if (flag(p, "add_prefix_space", false)) {
      fail("tokenizer.json: ByteLevel pre_tokenizer with add_prefix_space is not supported");
    }
    if (flag(p, "use_regex", true)) {
      hf.splits.push_back({translate_regex(kGpt2Regex), SplitBehavior::Isolated});
    }
    hf.byte_level = true;
  } else if (type == "Metaspace") {
    // Applied to the whole fragment below, which is only right before any split.
    if (!hf.splits.empty()) {
      fail("tokenizer.json: a Metaspace pre_tokenizer after another pre_tokenizer is not supported");
    }
    std::string replacement(kMetaspace);
    if (p.contains("replacement") && p.at("replacement").is_string()) {
      replacement = p.at("replacement").get<std::string>();
    }
    const std::string scheme =
        p.contains("prepend_scheme") && p.at("prepend_scheme").is_string()
            ? p.at("prepend_scheme").get<std::string>()
            : (flag(p, "add_prefix_space", true) ? "always" : "never");
    hf.normalizers.push_back({HfNormalizer::Kind::Replace, " ", replacement});
    if (scheme == "always") {
      hf.normalizers.push_back({HfNormalizer::Kind::PrependIfAbsent, "", replacement});
    } else if (scheme == "first") {
      hf.normalizers.push_back({HfNormalizer::Kind::PrependIfAbsentAtStart, "", replacement});
    } else if (scheme != "never") {
      fail("tokenizer.json: Metaspace prepend_scheme '", scheme, "' is not supported");
    }
    if (flag(p, "split", true)) {
      hf.splits.push_back({escape_literal(replacement), SplitBehavior::MergedWithNext});
    }
  } else {
    fail("tokenizer.json: pre_tokenizer '", type, "' is not supported");
  }
}

void add_decoder(const Json& d, HfPipeline& hf) {
  if (d.is_null()) {
    hf.decode_none = true;  // the library joins the tokens with spaces
    return;
  }
  const std::string type = type_of(d, "decoder");
  const bool per_token = type == "Replace" || type == "Metaspace" || type == "WordPiece";
  if (hf.decode_byte_fallback && per_token) hf.decode_byte_runs_as_tokens = true;
  if (type == "Sequence") {
    const Json& list = member(d, "decoders", "Sequence decoder");
    if (!list.is_array()) fail("tokenizer.json: Sequence decoder's list is not an array");
    for (const Json& step : list) add_decoder(step, hf);
  } else if (type == "ByteLevel") {
    hf.decode_byte_level = true;
  } else if (type == "Replace") {
    bool is_regex = false;
    const std::string pattern =
        string_pattern(member(d, "pattern", "Replace decoder"), "Replace decoder", &is_regex);
    const Json& content = member(d, "content", "Replace decoder");
    if (is_regex || pattern != kMetaspace || content != " ") {
      fail("tokenizer.json: Replace decoder other than U+2581 -> ' ' is not supported");
    }
    hf.decode_metaspace = true;
  } else if (type == "Metaspace") {
    hf.decode_metaspace = true;
    const std::string scheme =
        d.contains("prepend_scheme") && d.at("prepend_scheme").is_string()
            ? d.at("prepend_scheme").get<std::string>()
            : (flag(d, "add_prefix_space", true) ? "always" : "never");
    hf.decode_metaspace_drop_first = scheme != "never";
  } else if (type == "WordPiece") {
    hf.decode_wordpiece = true;
    hf.decode_wordpiece_cleanup = flag(d, "cleanup", true);
    if (d.contains("prefix")) {
      if (!d.at("prefix").is_string()) fail("tokenizer.json: WordPiece decoder's 'prefix' is not a string");
      hf.decode_wordpiece_prefix = d.at("prefix").get<std::string>();
    }
  } else if (type == "ByteFallback") {
    hf.decode_byte_fallback = true;
  } else if (type == "Fuse") {
    // Pieces are concatenated in any case.
  } else if (type == "Strip") {
    const Json& content = member(d, "content", "Strip decoder");
    const Json& start = member(d, "start", "Strip decoder");
    const Json& stop = member(d, "stop", "Strip decoder");
    if (content != " " || !start.is_number_unsigned() || start.get<uint64_t>() > 16 || stop != 0) {
      fail("tokenizer.json: Strip decoder other than leading spaces is not supported");
    }
    hf.strip_leading_spaces = static_cast<int>(start.get<uint64_t>());
  } else {
    fail("tokenizer.json: decoder '", type, "' is not supported");
  }
}

// The special tokens a TemplateProcessing puts before and after $A.
void add_post_processor(const Json& p, const Json& added_ids, VocabData& v) {
  if (p.is_null()) return;
  const std::string type = type_of(p, "post_processor");
  if (type == "Sequence") {
    const Json& list = member(p, "processors", "Sequence post_processor");
    if (!list.is_array()) fail("tokenizer.json: Sequence post_processor's list is not an array");
    for (const Json& step : list) add_post_processor(step, added_ids, v);
  } else if (type == "ByteLevel") {
    // Only adjusts offsets.
  } else if (type == "TemplateProcessing") {
    const Json& single = member(p, "single", "TemplateProcessing");
    const Json& specials = member(p, "special_tokens", "TemplateProcessing");
    if (!single.is_array()) fail("tokenizer.json: TemplateProcessing 'single' is not an array");
    std::vector<int32_t> before, after;
    bool seen_a = false;
    for (const Json& item : single) {
      if (item.is_object() && item.contains("Sequence")) {
        if (seen_a) fail("tokenizer.json: TemplateProcessing 'single' has two sequences");
        seen_a = true;
      } else if (item.is_object() && item.contains("SpecialToken")) {
        const Json& name = member(item.at("SpecialToken"), "id", "TemplateProcessing token");
        if (!name.is_string() || !specials.contains(name.get<std::string>())) {
          fail("tokenizer.json: TemplateProcessing names an undeclared special token");
        }
        const Json& ids = member(specials.at(name.get<std::string>()), "ids", "special token");
        if (!ids.is_array() || ids.size() != 1 || !ids[0].is_number_unsigned() ||
            ids[0].get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
          fail("tokenizer.json: TemplateProcessing token '", name.get<std::string>(),
               "' is not one id");
        }
        (seen_a ? after : before).push_back(static_cast<int32_t>(ids[0].get<uint64_t>()));
      } else {
        fail("tokenizer.json: TemplateProcessing item is neither Sequence nor SpecialToken");
      }
    }
    if (before.size() > 1 || after.size() > 1) {
      fail("tokenizer.json: TemplateProcessing with more than one token before or after the "
           "text is not supported");
    }
    if (!before.empty()) {
      v.bos = before[0];
      v.add_bos = true;
    }
    if (!after.empty()) {
      v.eos = after[0];
      v.add_eos = true;
    }
    (void)added_ids;
  } else {
    fail("tokenizer.json: post_processor '", type, "' is not supported");
  }
}

// A token named in tokenizer_config.json: a string, an AddedToken object or null.
std::string config_token(const Json& config, const char* key) {
  if (!config.contains(key)) return "";
  const Json& t = config.at(key);
  if (t.is_string()) return t.get<std::string>();
  if (t.is_object() && t.contains("content") && t.at("content").is_string()) {
    return t.at("content").get<std::string>();
  }
  return "";
}

int32_t checked_id(const Json& id, const char* where) {
  if (!id.is_number_unsigned() ||
      id.get<uint64_t>() >= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    fail("tokenizer.json: ", where, " id is not a non-negative 32-bit integer");
  }
  return static_cast<int32_t>(id.get<uint64_t>());
}

void read_bpe_options(const Json& model, HfPipeline& hf) {
  if (model.contains("dropout") && !model.at("dropout").is_null()) {
    fail("tokenizer.json: BPE dropout is not supported");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && !model.at(key).is_null() && model.at(key) != "") {
      fail("tokenizer.json: BPE ", key, " is not supported");
    }
  }
  hf.byte_fallback = flag(model, "byte_fallback", false);
  hf.fuse_unk = flag(model, "fuse_unk", false);
  hf.ignore_merges = flag(model, "ignore_merges", false);
}

void read_bpe_merges(const Json& model, VocabData& v) {
  static const Json kNoMerges = Json::array();
  const Json& merges = model.contains("merges") ? model.at("merges") : kNoMerges;
  if (!merges.is_array()) fail("tokenizer.json: model merges is not an array");
  v.merge_pairs.reserve(merges.size());
  for (const Json& m : merges) {
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        fail("tokenizer.json: merge '", s, "' is not two tokens separated by one space");
      }
      v.merge_pairs.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      v.merge_pairs.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      fail("tokenizer.json: a merge is neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
}

void read_wordpiece_options(const Json& model, HfPipeline& hf) {
  if (model.contains("continuing_subword_prefix")) {
    const Json& p = model.at("continuing_subword_prefix");
    if (!p.is_string()) fail("tokenizer.json: WordPiece continuing_subword_prefix is not a string");
    hf.continuing_subword_prefix = p.get<std::string>();
  }
  if (model.contains("max_input_chars_per_word")) {
    const Json& m = model.at("max_input_chars_per_word");
    if (!m.is_number_unsigned()) {
      fail("tokenizer.json: WordPiece max_input_chars_per_word is not a non-negative integer");
    }
    hf.max_input_chars_per_word = m.get<uint64_t>();
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open ", path.string());
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) fail("cannot read ", path.string());
  return s.str();
}

}  // namespace

std::unique_ptr<Tokenizer> parse_hf_tokenizer(const std::string& tokenizer_json,
                                              const std::string& config_json) {
  const Json j = Json::parse(tokenizer_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) fail("tokenizer.json: not a JSON object");
  Json config = Json::object();
  if (!config_json.empty()) {
    config = Json::parse(config_json, nullptr, false);
    if (config.is_discarded() || !config.is_object()) fail("tokenizer_config.json: not a JSON object");
  }

  const Json& model = member(j, "model", "the file");
  const std::string model_type = model.contains("type") ? type_of(model, "model") : "BPE";
  VocabData v;
  if (model_type == "BPE") {
    v.model = VocabModel::HfBpe;
    read_bpe_options(model, v.hf);
  } else if (model_type == "Unigram") {
    v.model = VocabModel::HfUnigram;
    v.hf.byte_fallback = flag(model, "byte_fallback", false);
  } else if (model_type == "WordPiece") {
    v.model = VocabModel::HfWordPiece;
    read_wordpiece_options(model, v.hf);
  } else {
    fail("tokenizer.json: model type '", model_type, "' is not supported (BPE, Unigram, WordPiece)");
  }

  // The model's own pieces: an object text -> id (BPE, WordPiece), or an array of
  // [text, log-probability] whose index is the id (Unigram).
  const Json& vocab = member(model, "vocab", "model");
  std::vector<std::pair<std::string, int32_t>> entries;
  if (v.model == VocabModel::HfUnigram) {
    if (!vocab.is_array()) fail("tokenizer.json: Unigram vocab is not an array");
    entries.reserve(vocab.size());
    v.hf.unigram_scores.reserve(vocab.size());
    // The scores as the library reads them (io/hf_unigram_scores.h says why).
    const std::vector<std::string> score_texts = unigram_score_texts(tokenizer_json);
    for (const Json& e : vocab) {
      const size_t i = entries.size();
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number()) {
        fail("tokenizer.json: Unigram vocab entry ", i, " is not [text, score]");
      }
      entries.emplace_back(e[0].get<std::string>(), static_cast<int32_t>(i));
      double score = e[1].get<double>();
      if (i < score_texts.size() && !score_texts[i].empty()) {
        const std::optional<double> serde = serde_json_f64(score_texts[i]);
        if (!serde) fail("tokenizer.json: Unigram score ", score_texts[i], " is out of range");
        score = *serde;
      }
      v.hf.unigram_scores.push_back(score);
    }
  } else {
    if (!vocab.is_object()) fail("tokenizer.json: model vocab is not an object");
    entries.reserve(vocab.size());
    for (const auto& [text, id] : vocab.items()) entries.emplace_back(text, checked_id(id, "vocab"));
  }
  const Json empty_array = Json::array();
  const Json& added = j.contains("added_tokens") ? j.at("added_tokens") : empty_array;
  if (!added.is_array()) fail("tokenizer.json: added_tokens is not an array");
  size_t n = 0;
  for (const auto& [text, id] : entries) n = std::max<size_t>(n, id + size_t{1});
  v.hf.model_vocab_size = n;
  for (const Json& a : added) n = std::max<size_t>(n, checked_id(member(a, "id", "added token"), "added token") + size_t{1});
  // Ids are dense in real files; a sparse one would make us allocate for nothing.
  if (n > 2 * (entries.size() + added.size()) + 16) {
    fail("tokenizer.json: token ids reach ", n, " for ", entries.size() + added.size(), " tokens");
  }
  v.tokens.assign(n, "");
  v.token_types.assign(n, static_cast<int32_t>(TokenType::Normal));
  for (auto& [text, i] : entries) {
    if (!v.tokens[i].empty()) fail("tokenizer.json: id ", i, " has two tokens");
    if (v.hf.byte_fallback && text.size() == 6 && text.compare(0, 3, "<0x") == 0 && text[5] == '>') {
      v.token_types[i] = static_cast<int32_t>(TokenType::Byte);
    }
    v.tokens[i] = std::move(text);
  }

  add_normalizer(j.contains("normalizer") ? j.at("normalizer") : Json(), v.hf);
  add_pre_tokenizer(j.contains("pre_tokenizer") ? j.at("pre_tokenizer") : Json(), v.hf);
  add_decoder(j.contains("decoder") ? j.at("decoder") : Json(), v.hf);

  for (const Json& a : added) {
    const int32_t i = checked_id(member(a, "id", "added token"), "added token");
    const Json& content = member(a, "content", "added token");
    if (!content.is_string() || content.get<std::string>().empty()) {
      fail("tokenizer.json: added token ", i, " has no content");
    }
    const std::string text = content.get<std::string>();
    if (!v.tokens[i].empty() && v.tokens[i] != text) {
      fail("tokenizer.json: added token ", i, " '", text, "' differs from the vocab's '", v.tokens[i], "'");
    }
    for (const char* key : {"lstrip", "rstrip", "single_word"}) {
      if (flag(a, key, false)) {
        fail("tokenizer.json: added token '", text, "' uses ", key, ", which is not supported yet");
      }
    }
    // Normalized added tokens are matched on the raw text: exact only while no
    // normalizer could change them.
    if (flag(a, "normalized", false) && !v.hf.normalizers.empty()) {
      fail("tokenizer.json: added token '", text, "' is normalized, with a normalizer: not supported yet");
    }
    v.tokens[i] = text;
    v.token_types[i] = static_cast<int32_t>(flag(a, "special", false) ? TokenType::Control
                                                                      : TokenType::UserDefined);
  }

  if (v.model == VocabModel::HfBpe) read_bpe_merges(model, v);

  const auto find_token = [&](const std::string& text) -> int32_t {
    if (text.empty()) return -1;
    for (size_t i = 0; i < v.tokens.size(); ++i) {
      if (v.tokens[i] == text) return static_cast<int32_t>(i);
    }
    fail("tokenizer_config.json: token '", text, "' is not in the vocabulary");
  };
  if (v.model == VocabModel::HfUnigram) {
    if (model.contains("unk_id") && !model.at("unk_id").is_null()) {
      v.unk = checked_id(model.at("unk_id"), "Unigram unk");
      if (static_cast<size_t>(v.unk) >= v.hf.model_vocab_size) {
        fail("tokenizer.json: Unigram unk_id ", v.unk, " is outside the vocabulary");
      }
    }
  } else if (v.model == VocabModel::HfWordPiece) {
    // The library needs unk_token only once a word is unknown; so do we.
    const std::string unk = model.contains("unk_token") && model.at("unk_token").is_string()
                                ? model.at("unk_token").get<std::string>()
                                : "[UNK]";
    for (size_t i = 0; i < v.hf.model_vocab_size; ++i) {
      if (v.tokens[i] == unk) v.unk = static_cast<int32_t>(i);
    }
  } else if (model.contains("unk_token") && model.at("unk_token").is_string()) {
    v.unk = find_token(model.at("unk_token").get<std::string>());
  }

  add_post_processor(j.contains("post_processor") ? j.at("post_processor") : Json(), Json(), v);
  const int32_t config_bos = find_token(config_token(config, "bos_token"));
  const int32_t config_eos = find_token(config_token(config, "eos_token"));
  if (config_bos >= 0) v.bos = config_bos;
  if (config_eos >= 0) v.eos = config_eos;
  // As transformers' Llama tokenizers do: an explicit add_bos_token / add_eos_token in
  // tokenizer_config.json overrides the post-processor.
  if (config.contains("add_bos_token") && config.at("add_bos_token").is_boolean()) {
    v.add_bos = config.at("add_bos_token").get<bool>();
  }
  if (config.contains("add_eos_token") && config.at("add_eos_token").is_boolean()) {
    v.add_eos = config.at("add_eos_token").get<bool>();
  }
  return make_tokenizer(std::move(v));
}

std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path file = path;
  std::error_code ec;
  if (fs::is_directory(file, ec)) file /= "tokenizer.json";
  if (!fs::exists(file, ec)) fail("no tokenizer.json at ", file.string());
  const fs::path config_path = file.parent_path() / "tokenizer_config.json";
  const std::string config = fs::exists(config_path, ec) ? read_file(config_path) : "";
  try {
    return parse_hf_tokenizer(read_file(file), config);
  } catch (const Error& e) {
    fail(file.string(), ": ", e.what());
  }
}

}  // namespace pagoda
