// Opening just a tokenizer from whatever the user names: a .gguf file, a Hugging Face
// directory or a tokenizer.json.
#pragma once

#include <memory>
#include <string>

#include "io/tokenizer.h"

namespace pagoda::cli {

[[nodiscard]] std::unique_ptr<Tokenizer> open_tokenizer(const std::string& path);

}  // namespace pagoda::cli
