// The tokenizer core on small synthetic vocabularies, against naive reference
// implementations written here (quadratic, obviously correct), plus UTF-8 handling and
// the errors for inconsistent vocabularies. Needs no model files.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/utf8.h"
#include "io/vocab.h"

namespace pagoda {
namespace {

// --- UTF-8 ---------------------------------------------------------------------------

TEST(Utf8, ReplacesMaximalSubpartsAsTheUnicodeStandardShows) {
  // Unicode 15, section 3.9, Table 3-8: "U+FFFD for each maximal subpart".
  const std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8_replace_invalid_subparts(in), "a" + r + r + r + "b" + r + "c" + r + r + "d");
  // Overlong, surrogate and beyond-U+10FFFF forms are each invalid byte by byte.
  EXPECT_EQ(utf8_replace_invalid_subparts("\xC0\xAF"), r + r);
  EXPECT_EQ(utf8_replace_invalid_subparts("\xED\xA0\x80"), r + r + r);
  EXPECT_EQ(utf8_replace_invalid_subparts("\xF4\x90\x80\x80"), r + r + r + r);
  EXPECT_EQ(utf8_replace_invalid_subparts("ok \xE2\x82\xAC"), "ok \xE2\x82\xAC");
  // llama.cpp's input policy: one U+FFFD per byte that starts no valid sequence.
  EXPECT_EQ(utf8_replace_invalid_bytes("\xE2\x82x"), r + r + "x");
}

TEST(Utf8, Gpt2ByteMapIsABijectionOntoPrintableCodePoints) {
  const auto& map = gpt2_byte_to_codepoint();
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(gpt2_codepoint_to_byte(map[b]), b);
    EXPECT_GT(map[b], 0x20u);  // never a space or control character
  }
  EXPECT_EQ(map['A'], static_cast<uint32_t>('A'));
  EXPECT_EQ(map[' '], 0x120u);  // the familiar 'Ġ'
  EXPECT_EQ(gpt2_codepoint_to_byte(0x20), -1);
}

// --- synthetic byte-level BPE ---------------------------------------------------------

// The byte-mapped text of raw bytes.
std::string mapped(std::string_view raw) {
  std::string out;
  for (char c : raw) utf8_append(out, gpt2_byte_to_codepoint()[static_cast<uint8_t>(c)]);
  return out;
}

// A vocabulary over "ab c": all 256 byte tokens, then merges.
VocabData small_bpe() {
  VocabData v;
  v.model = VocabModel::Gpt2Bpe;
  v.pre = "gpt-2";
  for (int b = 0; b < 256; ++b) v.tokens.push_back(mapped(std::string(1, static_cast<char>(b))));
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"a", "b"}, {"b", "a"}, {"ab", "ab"}, {" ", "a"}, {"a", "a"}, {"ba", "c"},
      {" a", "b"}, {"c", "c"}, {"aa", "b"}, {"abab", "c"}, {" ab", "ab"},
  };
  for (const auto& [l, r] : merges) {
    v.merges.push_back(mapped(l) + " " + mapped(r));
    if (std::find(v.tokens.begin(), v.tokens.end(), mapped(l + r)) == v.tokens.end()) {
      v.tokens.push_back(mapped(l + r));
    }
  }
  return v;
}

// Textbook BPE on one piece: repeatedly merge the leftmost pair of lowest rank.
std::vector<int32_t> naive_bpe(const VocabData& v, std::string_view piece) {
  std::vector<std::string> syms;
  for (char c : piece) syms.push_back(mapped(std::string(1, c)));
  while (true) {
    size_t best = 0, best_rank = std::numeric_limits<size_t>::max();
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      for (size_t r = 0; r < v.merges.size() && r < best_rank; ++r) {
        if (v.merges[r] == syms[i] + " " + syms[i + 1]) {
          best = i;
          best_rank = r;
        }
      }
    }
    if (best_rank == std::numeric_limits<size_t>::max()) break;
    syms[best] += syms[best + 1];
    syms.erase(syms.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  std::vector<int32_t> ids;
  for (const auto& s : syms) {
    ids.push_back(static_cast<int32_t>(std::find(v.tokens.begin(), v.tokens.end(), s) - v.tokens.begin()));
  }
  return ids;
}

// GPT-2 pieces for texts of 'a', 'b', 'c' and single spaces: a space starts a new piece.
std::vector<std::string> gpt2_pieces(const std::string& text) {
  std::vector<std::string> pieces;
  for (char c : text) {
    if (c == ' ' || pieces.empty() || pieces.back() == " ") {
      if (c != ' ' && !pieces.empty() && pieces.back() == " ") {
        pieces.back() += c;
        continue;
      }
      pieces.emplace_back(1, c);
    } else {
      pieces.back() += c;
    }
  }
  return pieces;
}

TEST(ByteLevelBpe, MatchesNaiveBpeOnRandomText) {
  const VocabData v = small_bpe();
  const auto tok = make_tokenizer(v);
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      // No two spaces in a row and no trailing space, so that pieces are "[ ]?[abc]+".
      const bool space_ok = !text.empty() && text.back() != ' ' && i + 1 < n;
      text += space_ok && rng() % 5 == 0 ? ' ' : "abc"[rng() % 3];
    }
    std::vector<int32_t> want;
    for (const auto& p : gpt2_pieces(text)) {
      const auto ids = naive_bpe(v, p);
      want.insert(want.end(), ids.begin(), ids.end());
    }
    ASSERT_EQ(tok->encode(text, false, false), want) << '"' << text << '"';
    ASSERT_EQ(tok->decode(want), text);
  }
}

// --- synthetic SentencePiece BPE ------------------------------------------------------

VocabData small_spm() {
  VocabData v;
  v.model = VocabModel::SentencePiece;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.token_types = {2, 3, 3};
  v.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    v.tokens.push_back(hex);
    v.token_types.push_back(6);
    v.scores.push_back(0);
  }
  const std::vector<std::pair<std::string, float>> pieces = {
      {"a", -1}, {"b", -2}, {"\xE2\x96\x81", -3}, {"ab", -4}, {"ba", -5},
      {"\xE2\x96\x81" "a", -6}, {"aba", -7}, {"bb", -8}, {"abab", -9}, {"\xE2\x96\x81" "ab", -10},
      {"\xC3\xA9", -11},  // é; 'c' and other letters fall back to bytes
  };
  for (const auto& [p, s] : pieces) {
    v.tokens.push_back(p);
    v.token_types.push_back(1);
    v.scores.push_back(s);
  }
  v.bos = 1;
  v.eos = 2;
  v.unk = 0;
  v.add_bos = true;
  v.add_space_prefix = false;
  return v;
}

// Textbook SentencePiece BPE: merge the leftmost adjacent pair whose concatenation is the
// token of highest score; symbols that are no token become their bytes' <0xXX>.
std::vector<int32_t> naive_spm(const VocabData& v, const std::string& text) {
  std::string escaped;
  for (char c : text) escaped += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
  std::vector<std::string> syms;
  for (size_t i = 0; i < escaped.size();) {
    const size_t n = std::max<size_t>(1, utf8_valid_length(escaped, i));
    syms.push_back(escaped.substr(i, n));
    i += n;
  }
  const auto find = [&](const std::string& s) -> int32_t {
    const auto it = std::find(v.tokens.begin(), v.tokens.end(), s);
    return it == v.tokens.end() ? -1 : static_cast<int32_t>(it - v.tokens.begin());
  };
  while (true) {
    int best = -1;
    float best_score = 0;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      const int32_t id = find(syms[i] + syms[i + 1]);
      if (id >= 0 && (best < 0 || v.scores[id] > best_score)) {
        best = static_cast<int>(i);
        best_score = v.scores[id];
      }
    }
    if (best < 0) break;
    syms[best] += syms[best + 1];
    syms.erase(syms.begin() + best + 1);
  }
  std::vector<int32_t> ids;
  for (const auto& s : syms) {
    const int32_t id = find(s);
    if (id >= 0) {
      ids.push_back(id);
    } else {
      for (char c : s) ids.push_back(3 + static_cast<uint8_t>(c));
    }
  }
  return ids;
}

TEST(SentencePieceBpe, MatchesNaiveSpmOnRandomText) {
  const VocabData v = small_spm();
  const auto tok = make_tokenizer(v);
  std::mt19937 rng(11);
  const std::vector<std::string> alphabet = {"a", "b", " ", "c", "\xC3\xA9", "\xE4\xB8\xAD"};
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
    ASSERT_EQ(tok->encode(text, false, false), naive_spm(v, text)) << '"' << text << '"';
    auto with_bos = naive_spm(v, text);
    with_bos.insert(with_bos.begin(), 1);
    ASSERT_EQ(tok->encode(text, true, false), with_bos);
    ASSERT_EQ(tok->decode(tok->encode(text, true, false)), text);
  }
}

TEST(SentencePieceBpe, SpecialTokensOnlyWhenParsed) {
  const auto tok = make_tokenizer(small_spm());
  const auto plain = tok->encode("a</s>b", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0);
  EXPECT_EQ(tok->decode(plain), "a</s>b");
  const auto parsed = tok->encode("a</s>b", false, true);
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[1], 2);
  EXPECT_EQ(tok->decode(parsed, true), "ab");
  EXPECT_EQ(tok->decode(parsed, false), "a</s>b");
  EXPECT_TRUE(tok->is_end_of_generation(2));
}

TEST(SentencePieceBpe, InvalidInputBytesFallBackAndDecodeToReplacement) {
  const auto tok = make_tokenizer(small_spm());
  const auto ids = tok->encode("a\xFF" "b", false, false);
  EXPECT_EQ(ids, (std::vector<int32_t>{tok->encode("a", false, false)[0], 3 + 0xFF,
                                       tok->encode("b", false, false)[0]}));
  EXPECT_EQ(tok->decode(ids), "a\xEF\xBF\xBD" "b");
}

// What small_spm() gives back for `text`, worked out from the text: every character
// outside its vocabulary (a, b, space, U+2581, é, and the special tokens when parsed), and
// every byte that is not UTF-8, becomes byte tokens; a run of those decodes to its bytes
// if they are valid UTF-8, else to one U+FFFD per byte (Hugging Face's ByteFallback). A
// U+2581 in the text is a space to SentencePiece, so it decodes as one.
std::string small_spm_round_trip(std::string_view text, bool parse_special) {
  std::string out, run;
  const auto end_run = [&] {
    if (utf8_is_valid(run)) {
      out += run;
    } else {
      for (size_t k = 0; k < run.size(); ++k) out += "\xEF\xBF\xBD";
    }
    run.clear();
  };
  for (size_t i = 0; i < text.size();) {
    const std::string_view rest = text.substr(i);
    size_t n = 0;
    for (std::string_view special : {"</s>", "<s>"}) {
      if (parse_special && rest.starts_with(special)) n = special.size();
    }
    if (n == 0) {
      for (std::string_view known : {"a", "b", " ", "\xE2\x96\x81", "\xC3\xA9"}) {
        if (rest.starts_with(known)) n = known.size();
      }
    }
    if (n == 0) {  // byte tokens: a whole character, or one byte that starts none
      const size_t len = std::max<size_t>(1, utf8_valid_length(text, i));
      run += rest.substr(0, len);
      i += len;
      continue;
    }
    end_run();
    out += rest.starts_with("\xE2\x96\x81") ? std::string(" ") : std::string(rest.substr(0, n));
    i += n;
  }
  end_run();
  return out;
}

// Arbitrary bytes (hostile input): never a crash, and decoding gives the text back with
// invalid UTF-8 replaced, for both models (their vocabularies cover every byte).
TEST(VocabTokenizer, ArbitraryBytesRoundTripUpToReplacement) {
  VocabData bpe_vocab = small_bpe();
  bpe_vocab.pre = "smollm";  // "gpt-2" decodes with clean_spaces (" ?" -> "?")
  const auto bpe = make_tokenizer(bpe_vocab);
  const auto spm = make_tokenizer(small_spm());
  std::mt19937 rng(3);
  const std::vector<std::string> pieces = {"a", "b", " ", "</s>", "<s>", "\xE2\x96\x81", "\n"};
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) {
      if (rng() % 2) {
        text += static_cast<char>(rng() % 256);
      } else {
        text += pieces[rng() % pieces.size()];
      }
    }
    const bool parse = rng() % 2;
    // Byte-level BPE replaces invalid input bytes before tokenizing (as llama.cpp does).
    EXPECT_EQ(bpe->decode(bpe->encode(text, true, parse), false),
              utf8_replace_invalid_subparts(utf8_replace_invalid_bytes(text)));
    EXPECT_EQ(spm->decode(spm->encode(text, false, parse), false),
              small_spm_round_trip(text, parse));
  }
}

// --- inconsistent vocabularies --------------------------------------------------------

TEST(VocabData, InconsistentVocabulariesAreErrors) {
  EXPECT_THROW((void)make_tokenizer(VocabData{}), Error);  // no tokens
  {
    VocabData v = small_bpe();
    v.tokens.push_back(v.tokens[65]);  // duplicate "A"
    EXPECT_THROW((void)make_tokenizer(v), Error);
  }
  {
    VocabData v = small_bpe();
    v.merges.push_back("nospace");
    EXPECT_THROW((void)make_tokenizer(v), Error);
  }
  {
    VocabData v = small_bpe();
    v.pre = "no-such-pre-tokenizer";
    EXPECT_THROW((void)make_tokenizer(v), Error);
  }
  {
    VocabData v = small_spm();
    v.scores.pop_back();
    EXPECT_THROW((void)make_tokenizer(v), Error);
  }
  {
    VocabData v = small_spm();
    v.token_types[5] = 99;
    EXPECT_THROW((void)make_tokenizer(v), Error);
  }
  {
    VocabData v = small_spm();
    v.bos = 1 << 30;  // out of range: dropped, and then BOS cannot be added
    EXPECT_THROW((void)make_tokenizer(v), Error);
  }
  const auto tok = make_tokenizer(small_spm());
  const std::vector<int32_t> bad = {1, -5};
  EXPECT_THROW((void)tok->decode(bad), Error);
  const std::vector<int32_t> beyond = {tok->vocab_size()};
  EXPECT_THROW((void)tok->decode(beyond), Error);
}

}  // namespace
}  // namespace pagoda
