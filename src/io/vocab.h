// A vocabulary as plain data, independent of where it came from (a GGUF file's
// tokenizer.ggml.* keys, or a tokenizer.json), and the tokenizer built from it.
// make_tokenizer() checks everything; the loaders only copy fields. GGUF vocabularies get
// no Unicode normalization (llama.cpp applies none); tokenizer.json ones get the
// normalizers their file names (HfPipeline).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/pretokenizer.h"
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
  HfBpe,          // Hugging Face tokenizer.json BPE: normalizers, split steps, ranked merges
  HfUnigram,      // tokenizer.json Unigram: Viterbi over the pieces' log-probabilities
  HfWordPiece,    // tokenizer.json WordPiece: greedy longest match, "##" continuations
};

// The parts of a tokenizer.json pipeline around its model (VocabModel::Hf*).
struct HfNormalizer {
  enum class Kind {
    Nfc, Nfd, Nfkc, Nfkd,    // Unicode normalization forms, in Unicode 9.0's tables
    Prepend, PrependIfAbsent, Replace,
    PrependIfAbsentAtStart,  // PrependIfAbsent on the fragment that begins the text only
    Lowercase,               // per character, full Unicode mapping
    StripAccents,            // drops combining marks (M*), in Unicode 9.0's tables
    BertStripAccents,        // drops nonspacing marks (Mn), in Unicode 8.0's (after Nfd)
    BertCleanText,           // drops NUL, U+FFFD and control characters, whitespace -> ' '
    BertChineseChars,        // spaces around CJK ideographs
  };
  Kind kind = Kind::Nfc;
  std::string pattern;  // Replace: the literal text replaced
  std::string content;  // Prepend / Replace: the text inserted
};

struct HfPipeline {
  std::vector<HfNormalizer> normalizers;  // applied in order to each non-special fragment
  std::vector<SplitRule> splits;          // pre-tokenizer steps, applied in order
  bool byte_level = false;                // ByteLevel pre-tokenizer: bytes -> GPT-2 code points
  bool byte_fallback = false;             // a character not in the vocabulary -> <0xXX> tokens
  bool fuse_unk = false;                  // consecutive unknown characters -> one <unk>
  bool ignore_merges = false;             // a piece that is a whole token is not merged
  // Ids below this are the model's own vocabulary; the others are only added tokens,
  // which the Unigram and WordPiece models never produce. 0: all ids.
  size_t model_vocab_size = 0;
  // Unigram: each id's log-probability (double, as the library sums them).
  std::vector<double> unigram_scores;
  // WordPiece.
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;  // a longer word is one unk
  // Decoder.
  bool decode_none = false;               // no decoder: the library joins tokens with ' '
  bool decode_byte_level = false;         // ByteLevel decoder
  bool decode_byte_fallback = false;      // ByteFallback decoder: <0xXX> tokens -> bytes
  // ByteFallback comes before a per-token step (Replace, Metaspace, WordPiece), which then
  // sees each run's text as one token (or each U+FFFD of an invalid run).
  bool decode_byte_runs_as_tokens = false;
  bool decode_metaspace = false;          // Replace U+2581 -> ' ' (or Metaspace decoder)
  bool decode_metaspace_drop_first = false;  // Metaspace decoder: no U+2581 in the first token
  bool decode_wordpiece = false;          // WordPiece decoder: "##x" -> "x", other tokens " x"
  bool decode_wordpiece_cleanup = false;  // and " ." -> "." etc. in each token
  std::string decode_wordpiece_prefix = "##";
  int strip_leading_spaces = 0;           // Strip decoder's start (after Fuse)
};

struct VocabData {
  VocabModel model = VocabModel::Gpt2Bpe;
  std::string pre = "default";         // pre-tokenizer name (byte-level BPE only)
  std::vector<std::string> tokens;     // id -> text, as stored (GPT-2 byte-mapped, or with U+2581)
  std::vector<float> scores;           // SentencePiece merge priority; empty: all 0
  std::vector<int32_t> token_types;    // TokenType values; empty: all Normal
  std::vector<std::string> merges;     // "left right"; the rank is the index (BPE only)
  // HfBpe: merges as (left, right) pairs (token texts may contain spaces), and pipeline.
  std::vector<std::pair<std::string, std::string>> merge_pairs;
  HfPipeline hf;
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
