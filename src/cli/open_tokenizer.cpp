// open_tokenizer: a GGUF file's embedded vocabulary, or a Hugging Face tokenizer.json
// (given directly or inside a model directory).
#include "cli/open_tokenizer.h"

#include <filesystem>

#include "io/hf_tokenizer.h"
#include "loader/gguf.h"

namespace pagoda::cli {

std::unique_ptr<Tokenizer> open_tokenizer(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec) || fs::path(path).extension() == ".json") return load_hf_tokenizer(path);
  const auto file = GgufFile::open(path);
  return load_gguf_tokenizer(*file);
}

}  // namespace pagoda::cli
