// Hugging Face tokenizer.json files (the `tokenizers` library's format) on the same
// tokenizer core as GGUF vocabularies: BPE, Unigram and WordPiece models. A component we
// do not implement is refused by name rather than approximated.
#pragma once

#include <memory>
#include <string>

#include "io/tokenizer.h"

namespace pagoda {

// `path`: a tokenizer.json file, or a directory holding one. tokenizer_config.json next to
// it, when present, sets bos_token / eos_token / add_bos_token / add_eos_token.
// Throws Error naming the file and the problem.
[[nodiscard]] std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path);

// The same from the texts of the two files (config_json may be empty).
[[nodiscard]] std::unique_ptr<Tokenizer> parse_hf_tokenizer(const std::string& tokenizer_json,
                                                            const std::string& config_json);

}  // namespace pagoda
