// The pre-tokenizer regexes (run with PCRE2) against Hugging Face tokenizers' own
// pre-tokenizers for the same names (tools/make_pretokenizer_golden_hf.py).
#include "io/pretokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace pagoda {
namespace {

TEST(PreTokenizer, SplitsLikeHuggingFace) {
  std::ifstream in(std::string(PAGODA_TEST_DATA) + "/tokenizer/pretokenizer_hf.jsonl");
  ASSERT_TRUE(in) << "golden file missing";
  std::map<std::string, std::unique_ptr<RegexSplitter>> splitters;
  std::map<std::string, int> lines;
  std::string line;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    const std::string pre = row.at("pre"), text = row.at("text");
    auto& splitter = splitters[pre];
    if (!splitter) {
      const auto spec = find_pre_tokenizer(pre);
      ASSERT_TRUE(spec.has_value()) << pre;
      splitter = std::make_unique<RegexSplitter>(spec->regexes);
    }
    splitter->split(text, ranges);
    std::vector<std::string> got;
    for (const auto& [b, e] : ranges) got.push_back(text.substr(b, e - b));
    EXPECT_EQ(got, row.at("pieces").get<std::vector<std::string>>())
        << pre << ": " << nlohmann::json(text).dump();
    ++lines[pre];
  }
  for (const char* pre : {"gpt-2", "smollm", "llama3", "qwen2"}) EXPECT_GT(lines[pre], 300) << pre;
}

TEST(PreTokenizer, EveryKnownNameCompilesAndUnknownOnesAreRefused) {
  for (const char* name : {"default", "", "llama3", "llama-bpe", "dbrx", "gpt-2", "smollm",
                           "starcoder", "qwen2", "stablelm2"}) {
    const auto spec = find_pre_tokenizer(name);
    ASSERT_TRUE(spec.has_value()) << name;
    RegexSplitter splitter(spec->regexes);
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    const std::string text = "It's 2024: naïve café — 東京 ok?\r\n\n  x";
    splitter.split(text, ranges);
    // The pieces tile the text.
    uint32_t at = 0;
    for (const auto& [b, e] : ranges) {
      EXPECT_EQ(b, at) << name;
      EXPECT_LT(b, e) << name;
      at = e;
    }
    EXPECT_EQ(at, text.size()) << name;
  }
  EXPECT_FALSE(find_pre_tokenizer("no-such-pre").has_value());
  EXPECT_THROW(RegexSplitter({"(unclosed"}), Error);
}

// Found by fuzz/hf_tokenizer_fuzz: a pattern that does not compile after some that do
// leaked the compiled ones (the destructor does not run when the constructor throws);
// LeakSanitizer checks this in the sanitizer build.
TEST(PreTokenizer, ABadPatternAfterGoodOnesIsAnErrorAndFreesThem) {
  try {
    RegexSplitter splitter({"\\s+", "\\p{N}+", "[xyz "});
    ADD_FAILURE() << "an unclosed class compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not compile"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagoda
