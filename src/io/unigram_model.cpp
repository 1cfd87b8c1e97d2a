// The Unigram model of tokenizer.json files (SentencePiece's unigram language model, as
// the `tokenizers` library runs it): per pre-tokenized piece, the segmentation into
// vocabulary pieces of highest total log-probability (Viterbi). A character that starts
// no piece of its own gets <unk> at the lowest score less 10; consecutive unknowns fuse
// into one; a fused or unknown string becomes its <0xXX> byte tokens under byte_fallback
// when all of them exist. Ties go to the segmentation found first: the earliest start.
#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "io/hf_pipeline.h"
#include "io/utf8.h"
#include "io/vocab_tables.h"

namespace pagoda {

namespace {

class HfUnigram final : public ModelEncoder {
 public:
  HfUnigram(const VocabTables& vocab, const HfPipeline& pipeline)
      : vocab_(vocab),
        normalizers_(pipeline.normalizers),
        splitter_(pipeline.splits),
        scores_(pipeline.unigram_scores),
        byte_fallback_(pipeline.byte_fallback) {
    if (scores_.empty()) fail("tokenizer: the Unigram model has no pieces");
    if (scores_.size() > vocab.tokens.size()) {
      fail("tokenizer: ", scores_.size(), " Unigram scores for ", vocab.tokens.size(), " tokens");
    }
    double min_score = std::numeric_limits<double>::infinity();
    for (size_t id = 0; id < scores_.size(); ++id) {
      min_score = std::min(min_score, scores_[id]);
      max_piece_bytes_ = std::max(max_piece_bytes_, vocab.tokens[id].size());
    }
    unk_score_ = min_score - 10.0;
    for (int b = 0; b < 256; ++b) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
      byte_token_[b] = find(hex);
    }
  }

  void encode(std::string_view raw, bool /*after_special*/, bool at_text_start,
              std::vector<int32_t>& out) const override {
    const std::string text = hf_normalize(raw, normalizers_, at_text_start);
    std::vector<std::pair<uint32_t, uint32_t>> pieces;
    splitter_.split(text, pieces);
    for (const auto& [begin, end] : pieces) {
      encode_piece(std::string_view(text).substr(begin, end - begin), out);
    }
  }

 private:
  // A model piece's id, or -1 (added tokens outside the model do not count).
  [[nodiscard]] int32_t find(std::string_view text) const {
    const int32_t id = vocab_.find(text);
    return id >= 0 && static_cast<size_t>(id) < scores_.size() ? id : -1;
  }

  struct BestPath {
    double score = 0.0;
    int32_t start = -1;  // where the last piece of the best path ending here starts
    int32_t id = -1;
  };

  void encode_piece(std::string_view s, std::vector<int32_t>& out) const {
    if (s.empty()) return;
    std::vector<BestPath> best(s.size() + 1);
    best[0].start = 0;
    const auto offer = [&](size_t start, size_t end, int32_t id, double score) {
      BestPath& b = best[end];
      const double candidate = best[start].score + score;
      if (b.start < 0 || candidate > b.score) b = {candidate, static_cast<int32_t>(start), id};
    };
    for (size_t start = 0; start < s.size();) {
      const size_t first_char = std::max<size_t>(1, utf8_valid_length(s, start));
      bool has_single_char = false;
      const size_t limit = std::min(s.size(), start + max_piece_bytes_);
      for (size_t end = start + first_char; end <= limit;) {
        const int32_t id = find(s.substr(start, end - start));
        if (id >= 0) {
          offer(start, end, id, scores_[id]);
          if (end - start == first_char) has_single_char = true;
        }
        if (end == s.size()) break;
        end += std::max<size_t>(1, utf8_valid_length(s, end));
      }
      if (!has_single_char) {
        if (vocab_.unk < 0) fail("tokenizer: Unigram text has an unknown character and no unk_id");
        offer(start, start + first_char, vocab_.unk, unk_score_);
      }
      start += first_char;
    }

    // Back from the end, fusing runs of <unk> into one string.
    std::vector<std::pair<size_t, size_t>> strings;  // [begin, end), last first
    bool previous_unk = false;
    for (size_t end = s.size(); end > 0;) {
      const BestPath& b = best[end];
      const bool unk = b.id == vocab_.unk;
      if (unk && previous_unk) {
        strings.back().first = static_cast<size_t>(b.start);
      } else {
        strings.emplace_back(static_cast<size_t>(b.start), end);
      }
      previous_unk = unk;
      end = static_cast<size_t>(b.start);
    }
    for (auto it = strings.rbegin(); it != strings.rend(); ++it) {
      emit(s.substr(it->first, it->second - it->first), out);
    }
  }

  void emit(std::string_view piece, std::vector<int32_t>& out) const {
    const int32_t id = find(piece);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
    if (byte_fallback_ && std::all_of(piece.begin(), piece.end(), [&](char c) {
          return byte_token_[static_cast<uint8_t>(c)] >= 0;
        })) {
      for (char c : piece) out.push_back(byte_token_[static_cast<uint8_t>(c)]);
      return;
    }
    if (vocab_.unk < 0) fail("tokenizer: Unigram text has an unknown piece and no unk_id");
    out.push_back(vocab_.unk);
  }

  const VocabTables& vocab_;
  std::vector<HfNormalizer> normalizers_;
  RegexSplitter splitter_;
  std::vector<double> scores_;  // per model id
  bool byte_fallback_;
  size_t max_piece_bytes_ = 1;
  double unk_score_ = 0.0;
  std::array<int32_t, 256> byte_token_{};
};

}  // namespace

std::unique_ptr<ModelEncoder> make_hf_unigram(const VocabTables& vocab,
                                              const HfPipeline& pipeline) {
  return std::make_unique<HfUnigram>(vocab, pipeline);
}

}  // namespace pagoda
