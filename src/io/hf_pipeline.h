// The text steps around the model of a tokenizer.json pipeline, shared by its BPE,
// Unigram and WordPiece encoders and by the decoder: the normalizers, and the decoder's
// per-token rewrite.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "io/vocab.h"

namespace pagoda {

// Runs the normalizers in order over one fragment of text (invalid UTF-8 bytes become
// U+FFFD first, as the library only ever sees valid strings); at_text_start: the fragment
// begins the whole text (not after a special token).
[[nodiscard]] std::string hf_normalize(std::string_view raw,
                                       const std::vector<HfNormalizer>& normalizers,
                                       bool at_text_start);

// The text a (non-byte) token decodes to; `first`: it is the first token decoded, which
// the Metaspace, WordPiece and absent decoders treat differently.
[[nodiscard]] std::string hf_decode_token(const HfPipeline& pipeline, std::string_view token,
                                          bool first);

// A PCRE2 class of what the library's BertPreTokenizer and Punctuation pre-tokenizer
// count as punctuation: ASCII punctuation (with symbols like $ + <) or P* in the Unicode
// 8.0 tables of the crate it uses.
[[nodiscard]] const std::string& hf_punctuation_class();

[[nodiscard]] std::string replace_all(std::string_view text, std::string_view from,
                                      std::string_view to);

}  // namespace pagoda
