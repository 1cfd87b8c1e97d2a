// Internal to the tokenizers: the vocabulary lookups shared by the model encoders
// (byte-level BPE, SentencePiece BPE), and the interface those encoders implement.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/pretokenizer.h"
#include "io/vocab.h"

namespace pagoda {

struct VocabTables {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<TokenType> types;
  std::unordered_map<std::string_view, int32_t> ids;  // views into `tokens`
  int32_t unk = -1;

  [[nodiscard]] int32_t find(std::string_view text) const {
    const auto it = ids.find(text);
    return it == ids.end() ? -1 : it->second;
  }
};

// Encodes one fragment of raw text (no special tokens in it) into ids.
class ModelEncoder {
 public:
  virtual ~ModelEncoder() = default;
  // after_special: the fragment starts the text or follows a special token.
  virtual void encode(std::string_view text, bool after_special,
                      std::vector<int32_t>& out) const = 0;
};

// Both throw Error for inconsistent data. `vocab` must outlive the encoder.
[[nodiscard]] std::unique_ptr<ModelEncoder> make_byte_level_bpe(
    const VocabTables& vocab, const std::vector<std::string>& merges,
    const PreTokenizerSpec& pre);
[[nodiscard]] std::unique_ptr<ModelEncoder> make_sentencepiece_bpe(const VocabTables& vocab,
                                                                   bool add_space_prefix);

}  // namespace pagoda
