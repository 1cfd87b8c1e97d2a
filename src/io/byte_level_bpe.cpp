// Byte-level BPE (GPT-2 style): regex pre-tokenization, each byte of a piece starts as the
// token of its GPT-2 code point, then the adjacent pair of lowest merge rank is merged
// until none is left (leftmost first among equal ranks), as in llama.cpp and Hugging Face.
// Symbols are token ids throughout: a merge is a hash lookup of two ids, no strings.
#include <array>
#include <algorithm>

#include "core/error.h"
#include "io/utf8.h"
#include "io/merge_table.h"
#include "io/vocab_tables.h"

namespace pagoda {

namespace {

class ByteLevelBpe final : public ModelEncoder {
 public:
  ByteLevelBpe(const VocabTables& vocab, const std::vector<std::string>& merges,
               const PreTokenizerSpec& pre)
      : vocab_(vocab), splitter_(pre.regexes), ignore_merges_(pre.ignore_merges) {
    const auto& byte_cp = gpt2_byte_to_codepoint();
    for (int b = 0; b < 256; ++b) {
      std::string s;
      utf8_append(s, byte_cp[b]);
      byte_text_[b] = s;
      byte_token_[b] = vocab.find(s);
    }
    std::vector<std::pair<uint64_t, Merge>> entries;
    entries.reserve(merges.size());
    for (size_t rank = 0; rank < merges.size(); ++rank) {
      const std::string& m = merges[rank];
      // The separator is the first space after the first character: the left part of a
      // merge is never empty, and spaces never occur in byte-mapped tokens.
      const size_t space = m.find(' ', 1);
      if (space == std::string::npos || space + 1 >= m.size()) {
        fail("tokenizer: merge ", rank, " ('", m, "') is not two tokens separated by a space");
      }
      const std::string_view left(m.data(), space);
      const std::string_view right(m.data() + space + 1, m.size() - space - 1);
      std::string joined;
      joined.reserve(m.size() - 1);
      joined.append(left).append(right);
      const int32_t l = vocab.find(left), r = vocab.find(right), j = vocab.find(joined);
      // A merge whose parts or result are not tokens can never apply to token symbols.
      if (l < 0 || r < 0 || j < 0) continue;
      entries.emplace_back(pair_key(l, r), Merge{static_cast<int32_t>(rank), j});
    }
    merges_.build(entries);
  }

  void encode(std::string_view raw, bool /*after_special*/, bool /*at_text_start*/,
              std::vector<int32_t>& out) const override {
    // The regexes need valid UTF-8; llama.cpp replaces each invalid byte with U+FFFD.
    std::string sanitized;
    std::string_view text = raw;
    if (!utf8_is_valid(raw)) {
      sanitized = utf8_replace_invalid_bytes(raw);
      text = sanitized;
    }
    std::vector<std::pair<uint32_t, uint32_t>> pieces;
    splitter_.split(text, pieces);
    Work work;
    for (const auto& [begin, end] : pieces) {
      encode_piece(text.substr(begin, end - begin), work, out);
    }
  }

 private:
  struct Symbol {
    int32_t id;
    int32_t prev, next;  // -1 at the ends; a merged-away symbol has id -2
  };
  struct Candidate {
    int32_t rank, left, right, left_id, right_id, result;
    bool operator<(const Candidate& o) const {  // priority_queue pops the largest
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  struct Work {
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap;
    std::string encoded;
  };

  void push_pair(Work& w, int32_t left, int32_t right) const {
    if (left < 0 || right < 0) return;
    const int32_t l = w.symbols[left].id, r = w.symbols[right].id;
    if (l < 0 || r < 0) return;
    const Merge* m = merges_.find(pair_key(l, r));
    if (m == nullptr) return;
    w.heap.push_back({m->rank, left, right, l, r, m->result});
    std::push_heap(w.heap.begin(), w.heap.end());
  }

  void encode_piece(std::string_view piece, Work& w, std::vector<int32_t>& out) const {
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(piece[i]); };
    if (piece.size() == 1 && byte_token_[byte(0)] >= 0) {
      out.push_back(byte_token_[byte(0)]);
      return;
    }
    if (ignore_merges_) {
      w.encoded.clear();
      for (size_t i = 0; i < piece.size(); ++i) w.encoded += byte_text_[byte(i)];
      const int32_t whole = vocab_.find(w.encoded);
      if (whole >= 0) {
        out.push_back(whole);
        return;
      }
    }
    const auto n = static_cast<int32_t>(piece.size());
    w.symbols.resize(piece.size());
    for (int32_t i = 0; i < n; ++i) {
      w.symbols[i] = {byte_token_[byte(i)], i - 1, i + 1 < n ? i + 1 : -1};
    }
    w.heap.clear();
    for (int32_t i = 0; i + 1 < n; ++i) push_pair(w, i, i + 1);
    while (!w.heap.empty()) {
      std::pop_heap(w.heap.begin(), w.heap.end());
      const Candidate c = w.heap.back();
      w.heap.pop_back();
      Symbol& left = w.symbols[c.left];
      // Stale if either side has changed since the pair was queued.
      if (left.id != c.left_id || left.next != c.right || w.symbols[c.right].id != c.right_id) {
        continue;
      }
      Symbol& right = w.symbols[c.right];
      left.id = c.result;
      left.next = right.next;
      if (right.next >= 0) w.symbols[right.next].prev = c.left;
      right.id = -2;
      push_pair(w, left.prev, c.left);
      push_pair(w, c.left, left.next);
    }
    for (int32_t i = 0; i >= 0; i = w.symbols[i].next) {
      const int32_t id = w.symbols[i].id;
      // A byte whose code point is not a token is dropped, as llama.cpp and Hugging Face
      // do (SmolLM2's vocabulary lacks a few control characters, e.g. U+001D).
      if (id >= 0) out.push_back(id);
    }
  }

  const VocabTables& vocab_;
  RegexSplitter splitter_;
  bool ignore_merges_;
  std::array<std::string, 256> byte_text_;
  std::array<int32_t, 256> byte_token_{};
  MergeTable merges_;
};

}  // namespace

std::unique_ptr<ModelEncoder> make_byte_level_bpe(const VocabTables& vocab,
                                                  const std::vector<std::string>& merges,
                                                  const PreTokenizerSpec& pre) {
  return std::make_unique<ByteLevelBpe>(vocab, merges, pre);
}

}  // namespace pagoda
