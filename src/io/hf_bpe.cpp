// The BPE model of Hugging Face tokenizer.json files, as the `tokenizers` library runs
// it: normalizers, then the split steps of the pre-tokenizer, then per piece (mapped to
// GPT-2 code points when the pre-tokenizer is ByteLevel) one symbol per character, a
// character outside the vocabulary becoming its <0xXX> byte tokens (byte_fallback) or
// <unk>, and the adjacent pair of lowest merge rank merged first (leftmost among equals).
#include <algorithm>
#include <array>
#include <cstdio>

#include "core/error.h"
#include "io/hf_pipeline.h"
#include "io/merge_table.h"
#include "io/utf8.h"
#include "io/vocab_tables.h"

namespace pagoda {

namespace {

class HfBpe final : public ModelEncoder {
 public:
  HfBpe(const VocabTables& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
        const HfPipeline& pipeline)
      : vocab_(vocab), pipeline_(pipeline), splitter_(pipeline.splits) {
    const auto& byte_cp = gpt2_byte_to_codepoint();
    for (int b = 0; b < 256; ++b) {
      utf8_append(byte_text_[b], byte_cp[b]);
      char hex[8];
      std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
      byte_token_[b] = vocab.find(hex);
    }
    std::vector<std::pair<uint64_t, Merge>> entries;
    entries.reserve(merges.size());
    std::string joined;
    for (size_t rank = 0; rank < merges.size(); ++rank) {
      const auto& [left, right] = merges[rank];
      joined.assign(left).append(right);
      const int32_t l = vocab.find(left), r = vocab.find(right), j = vocab.find(joined);
      // The `tokenizers` library refuses such a file; we name the merge.
      if (l < 0 || r < 0) {
        fail("tokenizer: merge ", rank, " ('", left, "' '", right, "') has a part that is not a token");
      }
      if (j < 0) fail("tokenizer: merge ", rank, " ('", left, "' '", right, "') makes no token");
      entries.emplace_back(pair_key(l, r), Merge{static_cast<int32_t>(rank), j});
    }
    merges_.build(entries);
  }

  void encode(std::string_view raw, bool /*after_special*/, bool at_text_start,
              std::vector<int32_t>& out) const override {
    const std::string text = hf_normalize(raw, pipeline_.normalizers, at_text_start);
    std::vector<std::pair<uint32_t, uint32_t>> pieces;
    splitter_.split(text, pieces);
    std::string mapped;
    for (const auto& [begin, end] : pieces) {
      std::string_view piece = std::string_view(text).substr(begin, end - begin);
      if (pipeline_.byte_level) {
        mapped.clear();
        for (char c : piece) mapped += byte_text_[static_cast<uint8_t>(c)];
        piece = mapped;
      }
      encode_piece(piece, out);
    }
  }

 private:
  struct Symbol {
    int32_t id;
    int32_t prev, next;  // -1 at the ends; a merged-away symbol has id -2
  };
  struct Candidate {
    int32_t rank, left, right, left_id, right_id, result;
    bool operator<(const Candidate& o) const {  // the heap pops the largest
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };

  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
    if (piece.empty()) return;
    if (pipeline_.ignore_merges) {
      const int32_t whole = vocab_.find(piece);
      if (whole >= 0) {
        out.push_back(whole);
        return;
      }
    }
    std::vector<Symbol> symbols;
    symbols.reserve(piece.size());
    const auto add = [&](int32_t id) {
      const auto index = static_cast<int32_t>(symbols.size());
      symbols.push_back({id, index - 1, -1});
      if (index > 0) symbols[index - 1].next = index;
    };
    bool last_unk = false;
    for (size_t i = 0; i < piece.size();) {
      const size_t n = std::max<size_t>(1, utf8_valid_length(piece, i));
      const int32_t id = vocab_.find(piece.substr(i, n));
      if (id >= 0) {
        add(id);
        last_unk = false;
      } else {
        bool bytes = pipeline_.byte_fallback;
        for (size_t k = i; bytes && k < i + n; ++k) {
          bytes = byte_token_[static_cast<uint8_t>(piece[k])] >= 0;
        }
        if (bytes) {
          for (size_t k = i; k < i + n; ++k) add(byte_token_[static_cast<uint8_t>(piece[k])]);
          last_unk = false;
        } else if (vocab_.unk >= 0) {
          if (!(pipeline_.fuse_unk && last_unk)) add(vocab_.unk);
          last_unk = true;
        }
      }
      i += n;
    }
    if (symbols.empty()) return;

    std::vector<Candidate> heap;
    const auto push_pair = [&](int32_t left, int32_t right) {
      if (left < 0 || right < 0) return;
      const int32_t l = symbols[left].id, r = symbols[right].id;
      const Merge* m = merges_.find(pair_key(l, r));
      if (m == nullptr) return;
      heap.push_back({m->rank, left, right, l, r, m->result});
      std::push_heap(heap.begin(), heap.end());
    };
    for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) push_pair(i, i + 1);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      const Candidate c = heap.back();
      heap.pop_back();
      Symbol& left = symbols[c.left];
      if (left.id != c.left_id || left.next != c.right || symbols[c.right].id != c.right_id) {
        continue;  // stale: a side has changed since the pair was queued
      }
      Symbol& right = symbols[c.right];
      left.id = c.result;
      left.next = right.next;
      if (right.next >= 0) symbols[right.next].prev = c.left;
      right.id = -2;
      push_pair(left.prev, c.left);
      push_pair(c.left, left.next);
    }
    for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
  }

  const VocabTables& vocab_;
  HfPipeline pipeline_;
  RegexSplitter splitter_;
  std::array<std::string, 256> byte_text_;
  std::array<int32_t, 256> byte_token_{};
  MergeTable merges_;
};

}  // namespace

std::unique_ptr<ModelEncoder> make_hf_bpe(
    const VocabTables& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
    const HfPipeline& pipeline) {
  return std::make_unique<HfBpe>(vocab, merges, pipeline);
}

}  // namespace pagoda
