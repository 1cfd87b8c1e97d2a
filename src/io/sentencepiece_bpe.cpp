// SentencePiece BPE (tokenizer.ggml.model "llama"), as llama.cpp's llm_tokenizer_spm runs
// it: spaces become U+2581, the text starts as one symbol per UTF-8 character, and the
// adjacent pair whose concatenation is the token of highest score is merged (leftmost
// first among equal scores) until no pair is a token. A symbol left that is not a token
// is emitted as its bytes' <0xXX> tokens (byte fallback). There is no pre-tokenization:
// the whole fragment is one sequence, which the priority queue keeps O(n log n).
#include <algorithm>
#include <array>
#include <cstdio>

#include "io/utf8.h"
#include "io/vocab_tables.h"

namespace pagoda {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

class SentencePieceBpe final : public ModelEncoder {
 public:
  SentencePieceBpe(const VocabTables& vocab, bool add_space_prefix)
      : vocab_(vocab), add_space_prefix_(add_space_prefix) {
    for (int b = 0; b < 256; ++b) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
      int32_t id = vocab.find(hex);
      if (id < 0) id = vocab.find(std::string(1, static_cast<char>(b)));
      byte_token_[b] = id >= 0 ? id : vocab.unk;
    }
  }

  void encode(std::string_view raw, bool after_special, bool /*at_text_start*/,
              std::vector<int32_t>& out) const override {
    std::string text;
    text.reserve(raw.size() + raw.size() / 2 + 3);
    if (add_space_prefix_ && after_special) text += kSpace;
    for (char c : raw) {
      if (c == ' ') {
        text += kSpace;
      } else {
        text += c;
      }
    }
    if (text.empty()) return;

    // One symbol per character; an invalid byte is a character of its own.
    std::vector<Symbol> symbols;
    symbols.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      const size_t n = std::max<size_t>(1, utf8_valid_length(text, i));
      const auto index = static_cast<int32_t>(symbols.size());
      symbols.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(n), index - 1, -1});
      if (index > 0) symbols[index - 1].next = index;
      i += n;
    }

    std::vector<Candidate> heap;
    const auto push_pair = [&](int32_t left, int32_t right) {
      if (left < 0 || right < 0) return;
      const Symbol& l = symbols[left];
      const uint32_t size = l.len + symbols[right].len;
      const int32_t id = vocab_.find(std::string_view(text).substr(l.begin, size));
      if (id < 0) return;
      heap.push_back({vocab_.scores[id], left, right, size});
      std::push_heap(heap.begin(), heap.end());
    };
    for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) push_pair(i, i + 1);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      const Candidate c = heap.back();
      heap.pop_back();
      Symbol& left = symbols[c.left];
      Symbol& right = symbols[c.right];
      // Symbols only grow, so a pair whose total length changed is stale.
      if (left.len == 0 || right.len == 0 || left.len + right.len != c.size) continue;
      left.len += right.len;
      right.len = 0;
      left.next = right.next;
      if (right.next >= 0) symbols[right.next].prev = c.left;
      push_pair(left.prev, c.left);
      push_pair(c.left, left.next);
    }

    for (int32_t i = 0; i >= 0; i = symbols[i].next) {
      const Symbol& s = symbols[i];
      const std::string_view piece = std::string_view(text).substr(s.begin, s.len);
      const int32_t id = vocab_.find(piece);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
      for (char c : piece) {
        const int32_t b = byte_token_[static_cast<uint8_t>(c)];
        if (b >= 0) out.push_back(b);
      }
    }
  }

 private:
  struct Symbol {
    uint32_t begin, len;  // bytes of the escaped text; len 0 once merged away
    int32_t prev, next;
  };
  struct Candidate {
    float score;
    int32_t left, right;
    uint32_t size;
    bool operator<(const Candidate& o) const {  // the heap pops the largest
      return score != o.score ? score < o.score : left > o.left;
    }
  };

  const VocabTables& vocab_;
  bool add_space_prefix_;
  std::array<int32_t, 256> byte_token_{};
};

}  // namespace

std::unique_ptr<ModelEncoder> make_sentencepiece_bpe(const VocabTables& vocab,
                                                     bool add_space_prefix) {
  return std::make_unique<SentencePieceBpe>(vocab, add_space_prefix);
}

}  // namespace pagoda
