// Text <-> token ids. One interface over every vocabulary source (GGUF-embedded
// vocabularies, Hugging Face tokenizer.json: io/hf_tokenizer.h), so that the CLI and
// engine never care which.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pagoda {

class GgufFile;

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // add_special: add the BOS/EOS tokens the vocabulary asks for (e.g. Gemma's <bos>).
  // parse_special: text that spells a special token becomes that token; off by default,
  // so that user text can never forge control tokens.
  [[nodiscard]] virtual std::vector<int32_t> encode(std::string_view text, bool add_special = true,
                                                    bool parse_special = false) const = 0;
  // Full decode of ids to UTF-8 text. Invalid bytes become U+FFFD: one per byte token of
  // an invalid run of byte-fallback tokens (Hugging Face's ByteFallback decoder), else one
  // per maximal invalid subpart (its ByteLevel decoder).
  [[nodiscard]] virtual std::string decode(std::span<const int32_t> ids,
                                           bool skip_special_tokens = true) const = 0;

  // How many bytes at the end of `text` = decode(ids, skip_special_tokens) more ids could
  // still rewrite, apart from a trailing incomplete UTF-8 sequence (shown as U+FFFD, which
  // the incremental detokenizer holds back anyway). Decoders that only append answer 0;
  // llama.cpp's space clean-up drops a space before a '?' that has not arrived yet; byte
  // fallback decodes a run of <0xXX> tokens as a whole, so one more byte token can turn a
  // valid trailing run into one U+FFFD per byte.
  [[nodiscard]] virtual size_t num_unsettled_tail_bytes(std::span<const int32_t> /*ids*/,
                                                        std::string_view /*text*/,
                                                        bool /*skip_special_tokens*/) const {
    return 0;
  }

  [[nodiscard]] virtual int vocab_size() const = 0;
  [[nodiscard]] virtual int32_t bos_id() const = 0;  // -1 if none
  [[nodiscard]] virtual int32_t eos_id() const = 0;  // -1 if none
  // End-of-generation: EOS and the other tokens that end a turn (<|im_end|>, <end_of_turn>).
  [[nodiscard]] virtual bool is_end_of_generation(int32_t id) const = 0;
};

// Builds the tokenizer described by a GGUF file's tokenizer.ggml.* metadata.
// Throws Error when the vocabulary is missing, inconsistent or of an unsupported model.
[[nodiscard]] std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& file);

}  // namespace pagoda
