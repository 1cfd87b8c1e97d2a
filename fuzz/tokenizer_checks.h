// Checks shared by the tokenizer fuzz targets (hf_tokenizer_fuzz, tokenize_fuzz): encode a
// text, check the ids, decode them, and check that the incremental detokenizer's deltas add
// up to the full decode. A broken invariant aborts (libFuzzer records it as a crash).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "io/incremental_detokenizer.h"
#include "io/tokenizer.h"
#include "io/utf8.h"

namespace pagoda::fuzz {

[[noreturn]] inline void invariant_failed(const char* what, std::string_view a, std::string_view b) {
  std::fprintf(stderr, "tokenizer invariant broken: %s\n  got:  '%.*s'\n  want: '%.*s'\n", what,
               static_cast<int>(a.size()), a.data(), static_cast<int>(b.size()), b.data());
  std::abort();
}

// Decodes `ids` fully and through an IncrementalDetokenizer fed `chunk`-sized (0: a
// varying size) slices; the deltas after flush() must be decode()'s text exactly, and that
// text valid UTF-8 (the decoders replace invalid bytes with U+FFFD).
inline void check_decode(const Tokenizer& tokenizer, std::span<const int32_t> ids,
                         bool skip_special_tokens, size_t chunk) {
  const std::string full = tokenizer.decode(ids, skip_special_tokens);
  if (!utf8_is_valid(full)) invariant_failed("decode() is not valid UTF-8", full, "");
  IncrementalDetokenizer detok(tokenizer, {.skip_special_tokens = skip_special_tokens});
  std::string streamed;
  for (size_t at = 0, step = 0; at < ids.size(); ++step) {
    const size_t n = std::min(ids.size() - at, chunk > 0 ? chunk : 1 + (step * 7 + at) % 4);
    streamed += detok.add(ids.subspan(at, n));
    at += n;
    if (full.compare(0, streamed.size(), streamed) != 0) {
      invariant_failed("incremental deltas are not a prefix of decode()", streamed, full);
    }
  }
  streamed += detok.flush();
  if (streamed != full) invariant_failed("incremental deltas != decode()", streamed, full);
}

// Encodes `text`, checks every id is in the vocabulary, and checks decoding as above.
// `errors_ok`: an Error from encode() is acceptable (a fuzzed vocabulary may, say, have a
// regex that hits PCRE2's match limit); with real vocabularies it is a bug.
inline void check_encode(const Tokenizer& tokenizer, std::string_view text, bool add_special,
                         bool parse_special, bool skip_special_tokens, size_t chunk,
                         bool errors_ok) {
  std::vector<int32_t> ids;
  try {
    ids = tokenizer.encode(text, add_special, parse_special);
  } catch (const Error& e) {
    if (errors_ok) return;
    invariant_failed("encode() threw", e.what(), "");
  }
  const int vocab = tokenizer.vocab_size();
  for (const int32_t id : ids) {
    if (id < 0 || id >= vocab) {
      std::fprintf(stderr, "tokenizer invariant broken: encode() gave id %d, vocabulary of %d\n",
                   id, vocab);
      std::abort();
    }
    (void)tokenizer.is_end_of_generation(id);
  }
  check_decode(tokenizer, ids, skip_special_tokens, chunk);
}

// Ids straight from the bytes (two per id, three past 65,536 tokens, modulo the
// vocabulary): sequences no encoder makes, such as split UTF-8 characters, lone
// byte-fallback tokens and special tokens in between.
inline std::vector<int32_t> ids_from_bytes(std::string_view bytes, int vocab) {
  const size_t width = vocab > 65536 ? 3 : 2;
  std::vector<int32_t> ids;
  for (size_t i = 0; i + width <= bytes.size(); i += width) {
    uint32_t v = 0;
    for (size_t k = 0; k < width; ++k) v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + k])) << (8 * k);
    ids.push_back(static_cast<int32_t>(v % static_cast<uint32_t>(vocab)));
  }
  return ids;
}

}  // namespace pagoda::fuzz
