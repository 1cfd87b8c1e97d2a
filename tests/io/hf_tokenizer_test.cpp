// tokenizer.json loading on small hand-written files: the ids of a tiny BPE worked out by
// hand (merge ranks, byte fallback, split behaviors, TemplateProcessing BOS, config
// override), and a clear Error for each unsupported component and malformed input.
// The real files are compared with the `tokenizers` library in tests/python.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/hf_tokenizer.h"
#include "io/pretokenizer.h"

namespace pagoda {
namespace {

using Json = nlohmann::json;
using Ids = std::vector<int32_t>;

// A byte-fallback BPE over a few letters: a=3 b=4 c=5 ab=6 abc=7 bc=8, merges
// "a b" (rank 0) then "ab c" (rank 1) then "b c" (rank 2).
Json tiny() {
  Json vocab = {{"<unk>", 0}, {"<s>", 1}, {"<0x20>", 2}, {"a", 3}, {"b", 4}, {"c", 5},
                {"ab", 6},    {"abc", 7}, {"bc", 8},     {"<0x7A>", 9}};
  return {
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"a b", "ab c", "b c"}},
                 {"byte_fallback", true}, {"unk_token", "<unk>"}}},
      {"added_tokens",
       {{{"id", 0}, {"content", "<unk>"}, {"special", true}},
        {{"id", 1}, {"content", "<s>"}, {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", nullptr},
      {"decoder", {{"type", "ByteFallback"}}},
      {"post_processor", nullptr},
  };
}

Ids encode(const Json& j, const std::string& text, bool add_special = false,
           bool parse_special = false, const std::string& config = "") {
  return parse_hf_tokenizer(j.dump(), config)->encode(text, add_special, parse_special);
}

std::string error_of(const Json& j, const std::string& config = "") {
  try {
    (void)parse_hf_tokenizer(j.dump(), config);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HfTokenizer, MergesByRankWithByteFallback) {
  const Json j = tiny();
  // "abc": a+b (rank 0) first, then ab+c; "bcab": b+c is rank 2 but a+b rank 0 comes first.
  EXPECT_EQ(encode(j, "abc"), (Ids{7}));
  EXPECT_EQ(encode(j, "bcab"), (Ids{8, 6}));
  // ' ' and 'z' are not tokens: their bytes; 'y' has no byte token: <unk>.
  EXPECT_EQ(encode(j, "a z"), (Ids{3, 2, 9}));
  EXPECT_EQ(encode(j, "y"), (Ids{0}));
  auto tok = parse_hf_tokenizer(j.dump(), "");
  const Ids ids = {7, 2, 9};
  EXPECT_EQ(tok->decode(ids), "abc z");
}

TEST(HfTokenizer, MergePairsAndStringsAreTheSame) {
  Json j = tiny();
  j["model"]["merges"] =
      Json::array({Json::array({"a", "b"}), Json::array({"ab", "c"}), Json::array({"b", "c"})});
  EXPECT_EQ(encode(j, "abcbc"), (Ids{7, 8}));
}

TEST(HfTokenizer, SpecialTokensOnlyWithParseSpecial) {
  const Json j = tiny();
  EXPECT_EQ(encode(j, "a<s>", false, true), (Ids{3, 1}));
  // Without parse_special "<s>" is text: '<', 's', '>' are no tokens and have no byte
  // tokens, so each is <unk> (fuse_unk is off), and with fuse_unk one <unk> for all three.
  EXPECT_EQ(encode(j, "a<s>"), (Ids{3, 0, 0, 0}));
  Json fused = j;
  fused["model"]["fuse_unk"] = true;
  EXPECT_EQ(encode(fused, "a<s>b"), (Ids{3, 0, 4}));
}

TEST(HfTokenizer, TemplateBosAndConfigOverride) {
  Json j = tiny();
  j["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                  {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
      {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}};
  EXPECT_EQ(encode(j, "ab", true), (Ids{1, 6}));
  EXPECT_EQ(encode(j, "ab", false), (Ids{6}));
  EXPECT_EQ(encode(j, "ab", true, false, R"({"add_bos_token": false})"), (Ids{6}));
}

TEST(HfTokenizer, NormalizersPrependAndReplace) {
  Json j = tiny();
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers",
                      {{{"type", "Prepend"}, {"prepend", "a"}},
                       {{"type", "Replace"}, {"pattern", {{"String", "z"}}}, {"content", "c"}}}}};
  EXPECT_EQ(encode(j, "bz"), (Ids{7}));  // "abc"
  EXPECT_EQ(encode(j, ""), (Ids{}));     // Prepend leaves empty text alone
}

TEST(HfTokenizer, SplitBehaviorsAsTheTokenizersLibraryDefinesThem) {
  // Splitting "a-b--c" on "-" (the library's documented examples for each behavior).
  const std::string text = "a-b--c";
  const auto pieces = [&](SplitBehavior b) {
    RegexSplitter s(std::vector<SplitRule>{{"-", b}});
    std::vector<std::pair<uint32_t, uint32_t>> p;
    s.split(text, p);
    std::vector<std::string> out;
    for (auto [begin, end] : p) out.push_back(text.substr(begin, end - begin));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces(SplitBehavior::Isolated), (V{"a", "-", "b", "-", "-", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::Removed), (V{"a", "b", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::MergedWithPrevious), (V{"a-", "b-", "-", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::MergedWithNext), (V{"a", "-b", "-", "-c"}));
}

TEST(HfTokenizer, RefusesUnsupportedComponentsByName) {
  Json j = tiny();
  j["model"]["type"] = "WordLevel";
  EXPECT_NE(error_of(j).find("WordLevel"), std::string::npos);
  j = tiny();
  j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}};
  EXPECT_NE(error_of(j).find("Precompiled"), std::string::npos);
  j = tiny();
  j["pre_tokenizer"] = {{"type", "UnicodeScripts"}};
  EXPECT_NE(error_of(j).find("UnicodeScripts"), std::string::npos);
  j = tiny();
  j["decoder"] = {{"type", "CTC"}};
  EXPECT_NE(error_of(j).find("decoder 'CTC'"), std::string::npos);
  j = tiny();
  j["post_processor"] = {{"type", "BertProcessing"}};
  EXPECT_NE(error_of(j).find("BertProcessing"), std::string::npos);
  j = tiny();
  j["added_tokens"][1]["lstrip"] = true;
  EXPECT_NE(error_of(j).find("lstrip"), std::string::npos);
  j = tiny();
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers", {{{"type", "WhitespaceSplit"}}, {{"type", "Metaspace"}}}}};
  EXPECT_NE(error_of(j).find("Metaspace pre_tokenizer after"), std::string::npos);
}

TEST(HfTokenizer, MalformedFilesAreErrors) {
  EXPECT_THROW((void)parse_hf_tokenizer("{", ""), Error);
  EXPECT_THROW((void)parse_hf_tokenizer("[]", ""), Error);
  EXPECT_THROW((void)parse_hf_tokenizer(tiny().dump(), "{"), Error);
  Json j = tiny();
  j["model"]["merges"] = {"a x"};
  EXPECT_NE(error_of(j).find("not a token"), std::string::npos);
  j = tiny();
  j["model"]["merges"] = {"abc"};
  EXPECT_NE(error_of(j).find("two tokens"), std::string::npos);
  j = tiny();
  j["model"]["vocab"]["huge"] = 2000000000;  // would size the id table by untrusted data
  EXPECT_NE(error_of(j).find("ids reach"), std::string::npos);
  j = tiny();
  j["model"]["vocab"]["neg"] = -1;
  EXPECT_NE(error_of(j).find("id"), std::string::npos);
  j = tiny();
  j["model"]["vocab"] = Json::array();
  EXPECT_THROW((void)parse_hf_tokenizer(j.dump(), ""), Error);
  EXPECT_NE(error_of(tiny(), R"({"bos_token": "<nope>"})").find("<nope>"), std::string::npos);
}

TEST(HfTokenizer, MissingFileNamesThePath) {
  try {
    (void)load_hf_tokenizer("/nonexistent/dir");
    FAIL();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("/nonexistent/dir"), std::string::npos);
    EXPECT_NE(message.find("tokenizer.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace pagoda
