// A vocabulary as plain data, independent of where it came from (a GGUF file's
// tokenizer.ggml.* keys now, tokenizer.json later), and the tokenizer built from it.
// make_tokenizer() checks everything; the loaders only copy fields.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/tokenizer.h"

namespace pagoda {

// The numbers GGUF's tokenizer.ggml.token_type uses (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

enum class VocabModel {
  Gpt2Bpe,        // byte-level BPE with ranked merges (tokenizer.ggml.model "gpt2")
  SentencePiece,  // SentencePiece BPE: merge by score, byte fallback ("llama")
};

struct VocabData {
  VocabModel model = VocabModel::Gpt2Bpe;
  std::string pre = "default";         // pre-tokenizer name (byte-level BPE only)
  std::vector<std::string> tokens;     // id -> text, as stored (GPT-2 byte-mapped, or with U+2581)
  std::vector<float> scores;           // SentencePiece merge priority; empty: all 0
  std::vector<int32_t> token_types;    // TokenType values; empty: all Normal
  std::vector<std::string> merges;     // "left right"; the rank is the index (BPE only)
  int32_t bos = -1;                    // -1: none
  int32_t eos = -1;
  int32_t eot = -1;                    // end of turn, e.g. <|im_end|>, <end_of_turn>
  int32_t eom = -1;                    // end of message (Llama 3.1 <|eom_id|>)
  int32_t unk = -1;
  int32_t pad = -1;
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;       // SentencePiece: prefix the text with a space
};

// Builds the tokenizer. Throws Error naming the problem when the vocabulary is empty,
// inconsistent (array sizes, duplicate texts, malformed merges, BOS asked for but absent)
// or uses a pre-tokenizer we do not know. Special ids outside the vocabulary are ignored
// (set to -1), as llama.cpp does.
[[nodiscard]] std::unique_ptr<Tokenizer> make_tokenizer(VocabData data);

}  // namespace pagoda
