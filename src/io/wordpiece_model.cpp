// The WordPiece model of tokenizer.json files (BERT's), as the `tokenizers` library runs
// it: per pre-tokenized word, greedy longest match first from the left, every piece but
// the first looked up with the continuing-subword prefix ("##"). A word with a part that
// matches nothing, or longer than max_input_chars_per_word characters, is one unk token.
#include <algorithm>

#include "core/error.h"
#include "io/hf_pipeline.h"
#include "io/utf8.h"
#include "io/vocab_tables.h"

namespace pagoda {

namespace {

class HfWordPiece final : public ModelEncoder {
 public:
  HfWordPiece(const VocabTables& vocab, const HfPipeline& pipeline)
      : vocab_(vocab),
        normalizers_(pipeline.normalizers),
        splitter_(pipeline.splits),
        prefix_(pipeline.continuing_subword_prefix),
        max_chars_(pipeline.max_input_chars_per_word),
        model_size_(pipeline.model_vocab_size == 0 ? vocab.tokens.size()
                                                   : pipeline.model_vocab_size) {
    for (size_t id = 0; id < model_size_ && id < vocab.tokens.size(); ++id) {
      max_token_bytes_ = std::max(max_token_bytes_, vocab.tokens[id].size());
    }
  }

  void encode(std::string_view raw, bool /*after_special*/, bool at_text_start,
              std::vector<int32_t>& out) const override {
    const std::string text = hf_normalize(raw, normalizers_, at_text_start);
    std::vector<std::pair<uint32_t, uint32_t>> pieces;
    splitter_.split(text, pieces);
    for (const auto& [begin, end] : pieces) {
      encode_word(std::string_view(text).substr(begin, end - begin), out);
    }
  }

 private:
  [[nodiscard]] int32_t find(std::string_view text) const {
    const int32_t id = vocab_.find(text);
    return id >= 0 && static_cast<size_t>(id) < model_size_ ? id : -1;
  }

  [[nodiscard]] int32_t unk() const {
    if (vocab_.unk < 0) fail("tokenizer: WordPiece text has an unknown word and no unk_token");
    return vocab_.unk;
  }

  void encode_word(std::string_view word, std::vector<int32_t>& out) const {
    if (word.empty()) return;
    size_t chars = 0;
    for (size_t i = 0; i < word.size(); i += std::max<size_t>(1, utf8_valid_length(word, i))) {
      ++chars;
    }
    if (chars > max_chars_) {
      out.push_back(unk());
      return;
    }
    const size_t first = out.size();
    std::string candidate;
    for (size_t start = 0; start < word.size();) {
      int32_t found = -1;
      // No token is longer than the longest one: start there, on a character boundary.
      size_t end = std::min(word.size(), start + max_token_bytes_);
      while (end > start && end < word.size() && (static_cast<uint8_t>(word[end]) & 0xC0) == 0x80) {
        --end;
      }
      while (end > start) {
        candidate.assign(start > 0 ? prefix_ : "").append(word.substr(start, end - start));
        found = find(candidate);
        if (found >= 0) break;
        do --end;  // back one character
        while (end > start && (static_cast<uint8_t>(word[end]) & 0xC0) == 0x80);
      }
      if (found < 0) {
        out.resize(first);
        out.push_back(unk());
        return;
      }
      out.push_back(found);
      start = end;
    }
  }

  const VocabTables& vocab_;
  std::vector<HfNormalizer> normalizers_;
  RegexSplitter splitter_;
  std::string prefix_;
  size_t max_chars_;
  size_t model_size_;
  size_t max_token_bytes_ = 0;
};

}  // namespace

std::unique_ptr<ModelEncoder> make_hf_wordpiece(const VocabTables& vocab,
                                                const HfPipeline& pipeline) {
  return std::make_unique<HfWordPiece>(vocab, pipeline);
}

}  // namespace pagoda
