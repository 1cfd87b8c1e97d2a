// libFuzzer target for tokenizer.json loading (parse_hf_tokenizer). Input: a tokenizer.json
// document, optionally followed by a NUL and a text to encode, optionally followed by
// another NUL and a tokenizer_config.json. Any pagoda::Error while loading is fine; other
// exceptions, crashes, leaks and hangs are bugs. A tokenizer that loads encodes the text
// (with and without special-token parsing, with and without BOS/EOS), its ids must lie in
// the vocabulary, and decoding them, in full and through the incremental detokenizer, must
// agree (fuzz/tokenizer_checks.h); so must decoding ids taken straight from the text bytes.
// Seeds: tools/make_hf_tokenizer_fuzz_seeds.py.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"
#include "io/hf_tokenizer.h"
#include "tokenizer_checks.h"

namespace {

constexpr size_t kMaxInput = 1 << 16;  // bounds the vocabulary and the text per input
constexpr size_t kMaxText = 1 << 10;   // encoding is the slow part under the sanitizers

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInput) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string json(input.substr(0, nul));
  std::string_view text, config;
  if (nul != std::string_view::npos) {
    text = input.substr(nul + 1);
    const size_t nul2 = text.find('\0');
    if (nul2 != std::string_view::npos) {
      config = text.substr(nul2 + 1);
      text = text.substr(0, nul2);
    }
  }
  if (text.size() > kMaxText) text = text.substr(0, kMaxText);

  std::unique_ptr<pagoda::Tokenizer> tokenizer;
  try {
    tokenizer = pagoda::parse_hf_tokenizer(json, std::string(config));
  } catch (const pagoda::Error&) {
    return 0;
  }
  (void)tokenizer->bos_id();
  (void)tokenizer->eos_id();
  for (const bool parse_special : {false, true}) {
    pagoda::fuzz::check_encode(*tokenizer, text, /*add_special=*/parse_special, parse_special,
                               /*skip_special_tokens=*/!parse_special, /*chunk=*/parse_special ? 1 : 0,
                               /*errors_ok=*/true);
  }
  const auto ids = pagoda::fuzz::ids_from_bytes(text, tokenizer->vocab_size());
  for (const bool skip : {true, false}) pagoda::fuzz::check_decode(*tokenizer, ids, skip, skip ? 0 : 1);
  return 0;
}
