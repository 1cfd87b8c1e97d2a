// The regex pre-tokenizers of byte-level BPE vocabularies, by the name GGUF files give
// them (tokenizer.ggml.pre), and a splitter that runs such regexes with PCRE2 (UTF, UCP,
// JIT). The patterns are those of the models' tokenizer.json files, as llama.cpp
// (src/llama-vocab.cpp) lists them per name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagoda {

// What a split step does with the regex's matches (Hugging Face SplitDelimiterBehavior).
enum class SplitBehavior { Isolated, Removed, MergedWithPrevious, MergedWithNext };

struct SplitRule {
  std::string regex;
  SplitBehavior behavior = SplitBehavior::Isolated;
};

struct PreTokenizerSpec {
  // Applied in order: each regex splits every piece so far into its matches and the gaps
  // between them (both kept), as llama.cpp's unicode_regex_split does.
  std::vector<std::string> regexes;
  bool ignore_merges = false;  // a piece that is a whole token is not merged (Llama 3)
  bool clean_spaces = true;    // decode removes the space before ?!., and 's 'm 're 've
  bool add_bos = false;        // BOS default when the file does not say (Llama 3)
};

// The spec for a tokenizer.ggml.pre name, or nullopt if we do not know it.
[[nodiscard]] std::optional<PreTokenizerSpec> find_pre_tokenizer(std::string_view name);

// Compiled regexes. split() is const and thread-safe.
class RegexSplitter {
 public:
  // Throws Error if a pattern does not compile.
  explicit RegexSplitter(const std::vector<std::string>& patterns);
  explicit RegexSplitter(const std::vector<SplitRule>& rules);
  ~RegexSplitter();
  RegexSplitter(const RegexSplitter&) = delete;
  RegexSplitter& operator=(const RegexSplitter&) = delete;

  // Splits valid UTF-8 text into pieces, given as [begin, end) byte offsets, in order and
  // covering the whole text.
  void split(std::string_view text, std::vector<std::pair<uint32_t, uint32_t>>& pieces) const;

 private:
  static void combine(SplitBehavior behavior,
                      const std::vector<std::pair<std::pair<uint32_t, uint32_t>, bool>>& segments,
                      std::vector<std::pair<uint32_t, uint32_t>>& out);
  std::vector<void*> codes_;
  std::vector<SplitBehavior> behaviors_;  // pcre2_code_8*, kept opaque so that users need no PCRE2
};

}  // namespace pagoda
