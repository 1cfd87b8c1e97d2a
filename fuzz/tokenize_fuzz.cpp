// libFuzzer target: arbitrary bytes (invalid UTF-8 included) through REAL vocabularies.
// At start-up it loads
//   - every sub-folder of $PAGODA_FUZZ_TOKENIZERS holding a tokenizer.json (and, beside it,
//     tokenizer_config.json), e.g. the shared tokenizers decompressed with zstd -dc;
//   - the vocabularies of the GGUF files in $PAGODA_FUZZ_GGUF (colon-separated), by default
//     ~/.cache/pagoda/SmolLM2-135M-Instruct.Q4_1.gguf and gemma-3-270m-q4_k_m.gguf where
//     present.
// Input: the first byte picks the tokenizer (bits 0-2, modulo their number) and the flags
// (bit 3 parse_special, bit 4 add BOS/EOS, bit 5 skip special tokens in decoding, bits 6-7
// how many ids the incremental detokenizer gets at a time); the rest is the text. Checks
// (fuzz/tokenizer_checks.h): encode() never throws, every id is in the vocabulary, decode()
// is valid UTF-8, and the incremental detokenizer's deltas add up to decode() exactly; the
// same for ids read straight from the text bytes. Round trips are not asserted (normalizers
// and U+FFFD replacement change text by design).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "io/hf_tokenizer.h"
#include "io/tokenizer.h"
#include "loader/gguf.h"
#include "tokenizer_checks.h"

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxText = 1 << 12;

struct Loaded {
  std::string name;
  std::unique_ptr<pagoda::Tokenizer> tokenizer;
};

std::vector<Loaded>& tokenizers() {
  static std::vector<Loaded> list;
  return list;
}

void load_all() {
  std::vector<Loaded>& list = tokenizers();
  if (const char* dir = std::getenv("PAGODA_FUZZ_TOKENIZERS")) {
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (fs::exists(entry.path() / "tokenizer.json")) folders.push_back(entry.path());
    }
    std::sort(folders.begin(), folders.end());
    for (const fs::path& folder : folders) {
      list.push_back({folder.filename().string(), pagoda::load_hf_tokenizer(folder.string())});
    }
  }
  std::vector<std::string> ggufs;
  if (const char* paths = std::getenv("PAGODA_FUZZ_GGUF")) {
    std::stringstream s(paths);
    for (std::string p; std::getline(s, p, ':');) {
      if (!p.empty()) ggufs.push_back(p);
    }
  } else {
    const char* home = std::getenv("HOME");
    const fs::path cache = fs::path(home ? home : "/root") / ".cache" / "pagoda";
    for (const char* name : {"SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"}) {
      if (fs::exists(cache / name)) ggufs.push_back((cache / name).string());
    }
  }
  for (const std::string& path : ggufs) {
    const auto file = pagoda::GgufFile::open(path);
    list.push_back({fs::path(path).filename().string(), pagoda::load_gguf_tokenizer(*file)});
  }
  if (list.empty()) {
    std::fprintf(stderr, "tokenize_fuzz: no tokenizer: set PAGODA_FUZZ_TOKENIZERS and/or PAGODA_FUZZ_GGUF\n");
    std::abort();
  }
  for (size_t i = 0; i < list.size(); ++i) {
    std::fprintf(stderr, "tokenize_fuzz: tokenizer %zu: %s (%d ids)\n", i, list[i].name.c_str(),
                 list[i].tokenizer->vocab_size());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  try {
    load_all();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenize_fuzz: loading the tokenizers failed: %s\n", e.what());
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<Loaded>& list = tokenizers();
  const uint8_t flags = data[0];
  const pagoda::Tokenizer& tokenizer = *list[(flags & 7u) % list.size()].tokenizer;
  const bool parse_special = (flags & 8u) != 0;
  const bool add_special = (flags & 16u) != 0;
  const bool skip_special = (flags & 32u) != 0;
  constexpr size_t kChunks[] = {0, 1, 2, 5};  // 0: a varying number
  const size_t chunk = kChunks[flags >> 6];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), std::min(size - 1, kMaxText));

  pagoda::fuzz::check_encode(tokenizer, text, add_special, parse_special, skip_special, chunk,
                             /*errors_ok=*/false);
  const auto ids = pagoda::fuzz::ids_from_bytes(text, tokenizer.vocab_size());
  pagoda::fuzz::check_decode(tokenizer, ids, skip_special, chunk);
  return 0;
}
