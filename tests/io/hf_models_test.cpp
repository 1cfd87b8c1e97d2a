// The WordPiece and Unigram models of tokenizer.json on small hand-written files whose
// ids are worked out by hand: greedy longest match with "##", unknown words, the word
// length limit; Viterbi with its tie rule, fused unknowns, byte fallback; the decoders;
// and serde_json's float reading. tests/python/test_tokenizer_models.py compares trained
// files with the `tokenizers` library itself.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/hf_tokenizer.h"
#include "io/hf_unigram_scores.h"

namespace pagoda {
namespace {

using Json = nlohmann::json;
using Ids = std::vector<int32_t>;

Json wordpiece() {
  const Json vocab = {{"[UNK]", 0}, {"[CLS]", 1},  {"[SEP]", 2}, {"un", 3},
                      {"##aff", 4}, {"##able", 5}, {"a", 6},     {"##b", 7},
                      {"hello", 8}, {",", 9},      {"##ll", 10}, {"he", 11}};
  return {
      {"model",
       {{"type", "WordPiece"},
        {"vocab", vocab},
        {"unk_token", "[UNK]"},
        {"continuing_subword_prefix", "##"},
        {"max_input_chars_per_word", 100}}},
      {"added_tokens",
       {{{"id", 0}, {"content", "[UNK]"}, {"special", true}},
        {{"id", 1}, {"content", "[CLS]"}, {"special", true}},
        {{"id", 2}, {"content", "[SEP]"}, {"special", true}}}},
      {"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
      {"post_processor", nullptr},
  };
}

// "▁" -1, a -2, b -2, ab -3, ▁ab -3.5, c -2.5, ▁a -3: the lowest score is -3.5, so an
// unknown character costs -13.5.
Json unigram() {
  const Json vocab = Json::array({{"<unk>", 0.0},
                                  {"\xE2\x96\x81", -1.0},
                                  {"a", -2.0},
                                  {"b", -2.0},
                                  {"ab", -3.0},
                                  {"\xE2\x96\x81"
                                   "ab",
                                   -3.5},
                                  {"c", -2.5},
                                  {"\xE2\x96\x81"
                                   "a",
                                   -3.0}});
  return {
      {"model", {{"type", "Unigram"}, {"vocab", vocab}, {"unk_id", 0}, {"byte_fallback", false}}},
      {"added_tokens", {{{"id", 0}, {"content", "<unk>"}, {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Metaspace"},
        {"replacement", "\xE2\x96\x81"},
        {"prepend_scheme", "always"},
        {"split", true}}},
      {"decoder",
       {{"type", "Metaspace"},
        {"replacement", "\xE2\x96\x81"},
        {"prepend_scheme", "always"},
        {"split", true}}},
      {"post_processor", nullptr},
  };
}

Ids encode(const Json& j, const std::string& text) {
  return parse_hf_tokenizer(j.dump(), "")->encode(text, false, false);
}

std::string decode(const Json& j, const Ids& ids) {
  return parse_hf_tokenizer(j.dump(), "")->decode(ids, true);
}

std::string error_of(const Json& j) {
  try {
    (void)parse_hf_tokenizer(j.dump(), "");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(WordPiece, GreedyLongestMatchWithContinuationPrefix) {
  const Json j = wordpiece();
  EXPECT_EQ(encode(j, "unaffable"), (Ids{3, 4, 5}));
  EXPECT_EQ(encode(j, "ab"), (Ids{6, 7}));
  // "hell": no "hell" or "hel", so "he", then "##ll" (not "hello" though it is longer).
  EXPECT_EQ(encode(j, "hell"), (Ids{11, 10}));
  // Lowercased and accents stripped by BertNormalizer; "," and "!" split off alone.
  EXPECT_EQ(encode(j, "HÉLLO, Unaffable!"), (Ids{8, 9, 3, 4, 5, 0}));
}

TEST(WordPiece, AWordWithAnUnmatchedPartIsOneUnk) {
  const Json j = wordpiece();
  EXPECT_EQ(encode(j, "unx a"), (Ids{0, 6}));  // "un" matched, "##x" not: the whole word
  EXPECT_EQ(encode(j, "b"), (Ids{0}));         // only "##b" exists
  // CJK ideographs become words of their own.
  EXPECT_EQ(encode(j,
                   "a\xE4\xB8\xAD"
                   "a"),
            (Ids{6, 0, 6}));
  Json limited = wordpiece();
  limited["model"]["max_input_chars_per_word"] = 5;
  EXPECT_EQ(encode(limited, "unaffable a"), (Ids{0, 6}));
  Json no_unk = wordpiece();
  no_unk["model"]["unk_token"] = "[NOPE]";
  EXPECT_EQ(encode(no_unk, "un"), (Ids{3}));  // needed only once a word is unknown
  EXPECT_THROW((void)encode(no_unk, "zzz"), Error);
}

TEST(WordPiece, DecoderJoinsContinuationsAndCleansUp) {
  const Json j = wordpiece();
  EXPECT_EQ(decode(j, {3, 4, 5, 9, 8}), "unaffable, hello");
  EXPECT_EQ(decode(j, {4, 3}), "##aff un");     // the first token keeps its prefix
  EXPECT_EQ(decode(j, {1, 4, 3}), "##aff un");  // ... also after a skipped [CLS]
  Json plain = wordpiece();
  plain["decoder"] = nullptr;  // no decoder: the library joins tokens with spaces
  EXPECT_EQ(decode(plain, {3, 4, 9}), "un ##aff ,");
}

TEST(Unigram, ViterbiPicksTheMostProbableSegmentation) {
  const Json j = unigram();
  EXPECT_EQ(encode(j, "ab"), (Ids{5}));        // ▁ab -3.5 beats ▁+ab -4 and ▁+a+b -5
  EXPECT_EQ(encode(j, "ba"), (Ids{1, 3, 2}));  // ▁ b a
  EXPECT_EQ(encode(j, "ab cab"), (Ids{5, 1, 6, 4}));
  // "▁a": ▁a -3 and ▁ + a -3 tie; the library keeps the first path found, ▁a.
  EXPECT_EQ(encode(j, "a"), (Ids{7}));
  EXPECT_EQ(encode(j, ""), (Ids{}));
}

TEST(Unigram, UnknownCharactersFuseIntoOneUnk) {
  const Json j = unigram();
  EXPECT_EQ(encode(j, "xyab"), (Ids{1, 0, 4}));  // ▁ [xy] ab
  EXPECT_EQ(encode(j, "x\xE2\x98\x83"), (Ids{1, 0}));
  Json no_unk = unigram();
  no_unk["model"]["unk_id"] = nullptr;
  EXPECT_EQ(encode(no_unk, "ab"), (Ids{5}));
  EXPECT_THROW((void)encode(no_unk, "x"), Error);
}

TEST(Unigram, ByteFallbackSpellsUnknownStringsInBytes) {
  Json j = unigram();
  j["model"]["byte_fallback"] = true;
  j["model"]["vocab"].push_back({"<0x78>", -20.0});  // 8: x
  j["model"]["vocab"].push_back({"<0x79>", -20.0});  // 9: y
  j["decoder"] = {{"type", "Sequence"}, {"decoders", {{{"type", "ByteFallback"}}, j["decoder"]}}};
  EXPECT_EQ(encode(j, "xyab"), (Ids{1, 8, 9, 4}));  // the fused "xy" as its two bytes
  EXPECT_EQ(encode(j, "xzab"), (Ids{1, 0, 4}));     // no byte token for z: <unk>
  EXPECT_EQ(decode(j, {1, 8, 9, 4}), "xyab");
}

TEST(Unigram, MetaspaceDecoderDropsTheFirstTokensSpaces) {
  const Json j = unigram();
  EXPECT_EQ(decode(j, {5, 1, 3}), "ab b");
  EXPECT_EQ(decode(j, {1, 1, 2}), " a");  // the first "▁" goes, the second is a space
  Json never = unigram();
  never["decoder"]["prepend_scheme"] = "never";
  EXPECT_EQ(decode(never, {5, 1, 3}), " ab b");
}

TEST(Unigram, MalformedVocabulariesAreErrors) {
  Json j = unigram();
  j["model"]["vocab"][2] = {"a"};
  EXPECT_NE(error_of(j).find("not [text, score]"), std::string::npos);
  j = unigram();
  j["model"]["unk_id"] = 99;
  EXPECT_NE(error_of(j).find("unk_id"), std::string::npos);
  j = unigram();
  j["model"]["vocab"] = Json::object();
  EXPECT_NE(error_of(j).find("not an array"), std::string::npos);
  j = unigram();
  j["model"]["vocab"][3] = {"a", -1.0};  // two ids for "a"
  EXPECT_NE(error_of(j).find("duplicate"), std::string::npos);
}

TEST(SerdeJsonF64, ReadsNumbersAsTheLibraryDoes) {
  // A trained score whose correctly rounded value is one ulp away from serde_json's; the
  // expected value is what `tokenizers` 0.22 writes back after reading the file.
  const std::string text = "-3.8653351144509402";
  EXPECT_EQ(*serde_json_f64(text), -3.86533511445094);
  EXPECT_NE(std::strtod(text.c_str(), nullptr), -3.86533511445094);
  EXPECT_EQ(*serde_json_f64("0.0"), 0.0);
  EXPECT_EQ(*serde_json_f64("-0.5"), -0.5);
  EXPECT_EQ(*serde_json_f64("1e2"), 100.0);
  EXPECT_EQ(*serde_json_f64("25E-1"), 2.5);
  EXPECT_EQ(*serde_json_f64("1e-400"), 0.0);
  EXPECT_FALSE(serde_json_f64("1e400").has_value());
  EXPECT_EQ(*serde_json_f64("123456789012345678901234567890"), 1.2345678901234568e29);
}

}  // namespace
}  // namespace pagoda
