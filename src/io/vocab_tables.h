// Internal to the tokenizers: the vocabulary lookups shared by the model encoders
// (byte-level BPE, SentencePiece BPE), and the interface those encoders implement.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/pretokenizer.h"
#include "io/vocab.h"

namespace pagoda {

// Text -> id, open addressing over the token texts. The tokenizers look up every
// candidate merge here, and std::unordered_map's node chains (262k of them for Gemma)
// made that lookup half of the encoding time.
class TokenIndex {
 public:
  void reserve(size_t n) {
    size_t capacity = 16;
    while (capacity < n * 2) capacity *= 2;
    slots_.assign(capacity, Slot{});
  }
  // Adds tokens[id] (non-empty); returns the id that already has that text, or -1.
  [[nodiscard]] int32_t insert(const std::vector<std::string>& tokens, int32_t id) {
    const std::string_view text = tokens[id];
    const uint64_t h = hash(text);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      if (slots_[i].id < 0) {
        slots_[i] = {static_cast<uint32_t>(h >> 32), id};
        return -1;
      }
      if (slots_[i].tag == static_cast<uint32_t>(h >> 32) && tokens[slots_[i].id] == text) {
        return slots_[i].id;
      }
    }
  }
  [[nodiscard]] int32_t find(const std::vector<std::string>& tokens, std::string_view text) const {
    const uint64_t h = hash(text);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (s.tag == static_cast<uint32_t>(h >> 32) && tokens[s.id] == text) return s.id;
    }
  }

 private:
  struct Slot {
    uint32_t tag = 0;  // high bits of the hash, to skip most string compares
    int32_t id = -1;
  };
  static uint64_t hash(std::string_view s) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then a final mix for the low bits
    for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
  }
  std::vector<Slot> slots_;
};

struct VocabTables {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<TokenType> types;
  TokenIndex ids;
  int32_t unk = -1;

  [[nodiscard]] int32_t find(std::string_view text) const { return ids.find(tokens, text); }
};

// Encodes one fragment of raw text (no special tokens in it) into ids.
class ModelEncoder {
 public:
  virtual ~ModelEncoder() = default;
  // after_special: the fragment starts the text or follows a special token;
  // at_text_start: it starts the text (Metaspace's prepend_scheme "first").
  virtual void encode(std::string_view text, bool after_special, bool at_text_start,
                      std::vector<int32_t>& out) const = 0;
};

// All throw Error for inconsistent data. `vocab` must outlive the encoder.
[[nodiscard]] std::unique_ptr<ModelEncoder> make_byte_level_bpe(
    const VocabTables& vocab, const std::vector<std::string>& merges,
    const PreTokenizerSpec& pre);
[[nodiscard]] std::unique_ptr<ModelEncoder> make_hf_bpe(
    const VocabTables& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
    const HfPipeline& pipeline);
[[nodiscard]] std::unique_ptr<ModelEncoder> make_hf_unigram(const VocabTables& vocab,
                                                            const HfPipeline& pipeline);
[[nodiscard]] std::unique_ptr<ModelEncoder> make_hf_wordpiece(const VocabTables& vocab,
                                                              const HfPipeline& pipeline);
[[nodiscard]] std::unique_ptr<ModelEncoder> make_sentencepiece_bpe(const VocabTables& vocab,
                                                                   bool add_space_prefix);

}  // namespace pagoda
