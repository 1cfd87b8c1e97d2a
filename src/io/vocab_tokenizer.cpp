// The Tokenizer over a VocabData: special-token partition, then the model's encoder for
// each raw fragment; decoding through a per-id table of byte pieces.
#include <algorithm>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/error.h"
#include "io/hf_pipeline.h"
#include "io/special_tokens.h"
#include "io/utf8.h"
#include "io/vocab.h"
#include "io/vocab_tables.h"

namespace pagoda {

namespace {

// Token texts that end a turn in the chat formats we know (llama.cpp's list, which it
// also applies by text because converters rarely record them in the metadata).
constexpr std::string_view kEndOfGeneration[] = {
    "<|eot_id|>", "<|im_end|>",      "<|end|>",           "<end_of_turn>", "<|endoftext|>",
    "<|eom_id|>", "<|end_of_text|>", "<end_of_utterance>", "<EOT>",
};

bool is_special_type(TokenType t) {
  return t == TokenType::Control || t == TokenType::Unknown || t == TokenType::Unused;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "<0xAB>" -> 0xAB, or -1.
int byte_token_value(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  const int hi = hex_digit(text[3]), lo = hex_digit(text[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// Consecutive byte-fallback tokens, decoded as Hugging Face's ByteFallback decoder does:
// the run's bytes as one token if they are valid UTF-8 as a whole, else one U+FFFD token
// per byte token.
class ByteRun {
 public:
  // `at_start`: this token is the first decoded (it matters to the run's first byte only).
  void add(char byte, bool at_start) {
    if (bytes_.empty()) at_start_ = at_start;
    bytes_ += byte;
  }
  bool empty() const { return bytes_.empty(); }
  bool at_start() const { return at_start_; }
  // The run's tokens as the decoder passes them on; starts a new run.
  std::vector<std::string> take() {
    std::vector<std::string> tokens;
    if (utf8_is_valid(bytes_)) {
      tokens.push_back(std::move(bytes_));
    } else {
      tokens.assign(bytes_.size(), "\xEF\xBF\xBD");
    }
    bytes_.clear();
    return tokens;
  }

 private:
  std::string bytes_;
  bool at_start_ = false;
};

std::string byte_level_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8_valid_length(text, i);
    if (n == 0) {  // not UTF-8: keep the byte as it is
      out += text[i++];
      continue;
    }
    const int b = gpt2_codepoint_to_byte(utf8_decode(text, i, n));
    if (b >= 0) {
      out += static_cast<char>(b);
    } else {
      out.append(text.data() + i, n);  // a character outside the byte alphabet
    }
    i += n;
  }
  return out;
}

std::string unescape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i, 3) == "\xE2\x96\x81") {
      out += ' ';
      i += 3;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// llama.cpp's clean_spaces (the old clean_up_tokenization_spaces of Hugging Face):
// " ?" " !" " ." " ," lose the space, " ' " becomes "'", " 's" " 'm" " 're" " 've" lose it.
std::string clean_spaces(const std::string& in) {
  std::string a;
  a.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char x = in[i];
    if (i > 0 && in[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) a.pop_back();
    a += x;
  }
  std::string b;
  b.reserve(a.size());
  char prev = a.empty() ? '\0' : a[0];
  if (!a.empty()) b += a[0];
  for (size_t i = 1; i < a.size(); ++i) {
    const char x = a[i];
    if (x == '\'' && i + 1 < a.size() && prev == ' ' && a[i + 1] == ' ') {
      b.pop_back();
      b += x;
      ++i;          // drop the space after it
      prev = '\0';  // llama.cpp overwrites that space, so it no longer counts as one
      continue;
    }
    b += x;
    prev = x;
  }
  std::string c;
  c.reserve(b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    const char x = b[i];
    if (i > 0 && b[i - 1] == ' ' && x == '\'' && i + 1 < b.size()) {
      const char x1 = b[i + 1];
      const char x2 = i + 2 < b.size() ? b[i + 2] : '\0';
      if (x1 == 's' || x1 == 'm' || (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) {
        c.pop_back();
      }
    }
    c += x;
  }
  return c;
}

class VocabTokenizer final : public Tokenizer {
 public:
  explicit VocabTokenizer(VocabData data) {
    const size_t n = data.tokens.size();
    if (n == 0) fail("tokenizer: the vocabulary has no tokens");
    if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
      fail("tokenizer: the vocabulary has ", n, " tokens, more than ids can number");
    }
    if (!data.scores.empty() && data.scores.size() != n) {
      fail("tokenizer: ", data.scores.size(), " scores for ", n, " tokens");
    }
    if (!data.token_types.empty() && data.token_types.size() != n) {
      fail("tokenizer: ", data.token_types.size(), " token types for ", n, " tokens");
    }
    model_ = data.model;
    vocab_.tokens = std::move(data.tokens);
    vocab_.scores = std::move(data.scores);
    vocab_.scores.resize(n, 0.0f);
    vocab_.types.resize(n, TokenType::Normal);
    for (size_t i = 0; i < data.token_types.size(); ++i) {
      const int32_t t = data.token_types[i];
      if (t < 0 || t > static_cast<int32_t>(TokenType::Byte)) {
        fail("tokenizer: token ", i, " has unknown token type ", t);
      }
      vocab_.types[i] = static_cast<TokenType>(t);
    }
    vocab_.ids.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const std::string& text = vocab_.tokens[i];
      if (text.empty()) continue;  // can be neither matched nor produced
      const int32_t previous = vocab_.ids.insert(vocab_.tokens, static_cast<int32_t>(i));
      if (previous >= 0) {
        fail("tokenizer: duplicate token '", text, "' has ids ", previous, " and ", i);
      }
    }

    const auto id_or_none = [&](int32_t id) {
      return id >= 0 && static_cast<size_t>(id) < n ? id : -1;
    };
    bos_ = id_or_none(data.bos);
    eos_ = id_or_none(data.eos);
    vocab_.unk = id_or_none(data.unk);
    add_bos_ = data.add_bos;
    add_eos_ = data.add_eos;
    add_space_prefix_ = data.add_space_prefix;
    if (add_bos_ && bos_ < 0) fail("tokenizer: the vocabulary asks for BOS but has no BOS id");
    if (add_eos_ && eos_ < 0) fail("tokenizer: the vocabulary asks for EOS but has no EOS id");

    for (int32_t id : {eos_, id_or_none(data.eot), id_or_none(data.eom)}) {
      if (id >= 0) end_of_generation_.insert(id);
    }
    for (size_t i = 0; i < n; ++i) {
      const std::string& text = vocab_.tokens[i];
      for (std::string_view eog : kEndOfGeneration) {
        if (text == eog) end_of_generation_.insert(static_cast<int32_t>(i));
      }
    }

    if (model_ == VocabModel::Gpt2Bpe) {
      const auto spec = find_pre_tokenizer(data.pre);
      if (!spec) fail("tokenizer: unknown pre-tokenizer '", data.pre, "'");
      clean_spaces_ = spec->clean_spaces;
      encoder_ = make_byte_level_bpe(vocab_, data.merges, *spec);
    } else if (is_hf()) {
      strip_leading_spaces_ = data.hf.strip_leading_spaces;
      if (model_ == VocabModel::HfBpe) {
        encoder_ = make_hf_bpe(vocab_, data.merge_pairs, data.hf);
      } else if (model_ == VocabModel::HfUnigram) {
        encoder_ = make_hf_unigram(vocab_, data.hf);
      } else {
        encoder_ = make_hf_wordpiece(vocab_, data.hf);
      }
      hf_ = std::move(data.hf);
      hf_.unigram_scores = {};  // the encoder has its copy; decoding needs only the flags
    } else {
      encoder_ = make_sentencepiece_bpe(vocab_, add_space_prefix_);
    }

    std::vector<SpecialTokenMatcher::Candidate> candidates;
    for (size_t i = 0; i < n; ++i) {
      const TokenType t = vocab_.types[i];
      if (t == TokenType::Control || t == TokenType::Unknown || t == TokenType::UserDefined) {
        candidates.push_back({static_cast<int32_t>(i), t == TokenType::UserDefined});
      }
    }
    specials_ = std::make_unique<SpecialTokenMatcher>(vocab_.tokens, std::move(candidates));

    pieces_.resize(n);
    byte_values_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      pieces_[i] = piece_of(static_cast<int32_t>(i));
      byte_values_[i] = static_cast<int16_t>(byte_value_of(static_cast<int32_t>(i)));
    }
  }

  std::vector<int32_t> encode(std::string_view text, bool add_special,
                              bool parse_special) const override {
    if (text.size() >= (size_t{1} << 31)) {
      fail("tokenizer: text of ", text.size(), " bytes is too long to tokenize");
    }
    std::vector<int32_t> out;
    out.reserve(text.size() / 3 + 2);
    if (add_special && add_bos_) out.push_back(bos_);
    std::vector<SpecialTokenMatcher::Fragment> fragments;
    specials_->partition(text, parse_special, fragments);
    bool after_special = true;
    for (const auto& f : fragments) {
      if (f.token >= 0) {
        out.push_back(f.token);
        after_special = true;
      } else {
        encoder_->encode(text.substr(f.begin, f.end - f.begin), after_special, f.begin == 0, out);
        after_special = false;
      }
    }
    if (add_special && add_eos_) out.push_back(eos_);
    return out;
  }

  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens) const override {
    std::string text;
    ByteRun run;
    bool first = true;
    for (int32_t id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= pieces_.size()) {
        fail("tokenizer: cannot decode token id ", id, " (vocabulary of ", pieces_.size(), ")");
      }
      if (skip_special_tokens && is_special_type(vocab_.types[id])) continue;
      // A byte token takes the first place too: the library's per-token decoders see it
      // as token 0 whether they run before ByteFallback (as "<0xXX>") or after it (as
      // the run's text).
      const bool at_start = first;
      first = false;
      if (byte_values_[id] >= 0) {
        run.add(static_cast<char>(byte_values_[id]), at_start);
        continue;
      }
      end_byte_run(run, text);
      std::string first_hf_piece;
      std::string_view piece = pieces_[id];
      // The library's Metaspace, WordPiece and absent decoders treat the first token apart
      // (a "<0xXX>" token without a ByteFallback decoder is an ordinary token to them).
      if (at_start && is_hf()) {
        first_hf_piece = hf_piece_of(id, /*first=*/true);
        piece = first_hf_piece;
      }
      // SentencePiece's prefix space is not part of the text.
      if (at_start && add_space_prefix_ && vocab_.types[id] == TokenType::Normal &&
          !piece.empty() && piece[0] == ' ') {
        piece.remove_prefix(1);
      }
      text += piece;
    }
    end_byte_run(run, text);
    if (clean_spaces_) text = clean_spaces(text);
    // The Strip decoder (after Fuse) drops up to that many leading spaces.
    size_t strip = 0;
    while (strip < static_cast<size_t>(strip_leading_spaces_) && strip < text.size() &&
           text[strip] == ' ') {
      ++strip;
    }
    text.erase(0, strip);
    // Byte runs are valid by now; what is left is a byte-level vocabulary's partial
    // characters (or a GGUF token text that is not UTF-8).
    return utf8_replace_invalid_subparts(text);
  }

  size_t num_unsettled_tail_bytes(std::span<const int32_t> ids, std::string_view text,
                                  bool skip_special_tokens) const override {
    return std::min(text.size(), std::max(num_tail_byte_run_bytes(ids, skip_special_tokens),
                                          num_unsettled_clean_up_bytes(text)));
  }

  int vocab_size() const override { return static_cast<int>(pieces_.size()); }
  int32_t bos_id() const override { return bos_; }
  int32_t eos_id() const override { return eos_; }
  bool is_end_of_generation(int32_t id) const override {
    return end_of_generation_.count(id) != 0;
  }

 private:
  // The decoded bytes of the run of byte tokens that ends `ids` (skipped special tokens
  // do not end a run): one more byte token decodes the run anew.
  size_t num_tail_byte_run_bytes(std::span<const int32_t> ids, bool skip_special_tokens) const {
    ByteRun run;
    size_t begin = ids.size();
    while (begin > 0) {
      const int32_t id = ids[begin - 1];
      if (id < 0 || static_cast<size_t>(id) >= byte_values_.size()) break;
      if (skip_special_tokens && is_special_type(vocab_.types[id])) {
        --begin;
        continue;
      }
      if (byte_values_[id] < 0) break;
      --begin;
    }
    for (int32_t id : ids.subspan(begin)) {
      if (byte_values_[id] >= 0) run.add(static_cast<char>(byte_values_[id]), begin == 0);
    }
    std::string bytes;
    end_byte_run(run, bytes);
    return bytes.size();
  }

  // Appends a finished run of byte tokens to `out`, through the per-token decoder steps
  // that come after ByteFallback (a "▁" spelled in bytes is a space under Metaspace then).
  void end_byte_run(ByteRun& run, std::string& out) const {
    if (run.empty()) return;
    bool first = run.at_start();
    for (const std::string& token : run.take()) {
      out += hf_.decode_byte_runs_as_tokens ? hf_decode_token(hf_, token, first) : token;
      first = false;
    }
  }

  size_t num_unsettled_clean_up_bytes(std::string_view text) const {
    if (!clean_spaces_) return 0;
    // clean_spaces drops a space before ?!., (known once the next character is), a space
    // on either side of a quote in " ' ", and a space before 's 'm 're 've (known two
    // characters past the quote). So a trailing space, and a quote among the last three
    // bytes with the space before it, may still change; everything before them is final.
    size_t from = text.size();
    if (!text.empty() && text.back() == ' ') from = text.size() - 1;
    const size_t window = text.size() > 3 ? text.size() - 3 : 0;
    const size_t quote = text.find('\'', window);
    if (quote != std::string_view::npos) {
      from = std::min(from, quote > 0 && text[quote - 1] == ' ' ? quote - 1 : quote);
    }
    return text.size() - from;
  }

  // The byte a token stands for in decoding, or -1. Hugging Face's ByteFallback decoder
  // goes by the text alone (any token spelled <0xXX>, added ones too); a GGUF vocabulary
  // marks its byte tokens by type.
  int byte_value_of(int32_t id) const {
    const std::string& text = vocab_.tokens[id];
    if (is_hf()) return hf_.decode_byte_fallback ? byte_token_value(text) : -1;
    return vocab_.types[id] == TokenType::Byte ? byte_token_value(text) : -1;
  }

  std::string piece_of(int32_t id) const {
    const std::string& text = vocab_.tokens[id];
    // Byte tokens too: without a ByteFallback decoder "<0xXX>" decodes as its text.
    if (is_hf()) return hf_piece_of(id, /*first=*/false);
    switch (vocab_.types[id]) {
      case TokenType::Control:
      case TokenType::Unknown:
      case TokenType::Unused:
      case TokenType::UserDefined:
        return text;
      case TokenType::Byte: {
        const int b = byte_token_value(text);
        if (b >= 0) return std::string(1, static_cast<char>(b));
        break;
      }
      case TokenType::Normal:
      case TokenType::Undefined:
        break;
    }
    return model_ == VocabModel::Gpt2Bpe ? byte_level_decode(text) : unescape_spaces(text);
  }

  // The `tokenizers` library runs added tokens through the decoder too (Gemma's added
  // "▁▁▁▁" decodes to four spaces).
  std::string hf_piece_of(int32_t id, bool first) const {
    const std::string& text = vocab_.tokens[id];
    return hf_decode_token(hf_, hf_.decode_byte_level ? byte_level_decode(text) : text, first);
  }
  bool is_hf() const {
    return model_ == VocabModel::HfBpe || model_ == VocabModel::HfUnigram ||
           model_ == VocabModel::HfWordPiece;
  }

  VocabModel model_;
  HfPipeline hf_;  // decoder flags (tokenizer.json models)
  VocabTables vocab_;
  std::unique_ptr<ModelEncoder> encoder_;
  std::unique_ptr<SpecialTokenMatcher> specials_;
  std::vector<std::string> pieces_;
  std::vector<int16_t> byte_values_;  // byte_value_of(id), for decode()
  std::unordered_set<int32_t> end_of_generation_;
  int32_t bos_ = -1, eos_ = -1;
  bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false, clean_spaces_ = false;
  int strip_leading_spaces_ = 0;
};

}  // namespace

std::unique_ptr<Tokenizer> make_tokenizer(VocabData data) {
  return std::make_unique<VocabTokenizer>(std::move(data));
}

}  // namespace pagoda
