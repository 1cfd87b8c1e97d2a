// UTF-8 helpers for the tokenizers: validation, replacement of invalid bytes with U+FFFD
// (two policies: the one llama.cpp's tokenizer applies to input, and the Unicode/Python
// "maximal subpart" one for decoded output), and the GPT-2 byte <-> code point map.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace pagoda {

// Length of the well-formed UTF-8 sequence that starts at s[i] (1-4), or 0 if the bytes
// there are not one (a stray continuation byte, an overlong form, a surrogate, > U+10FFFF,
// a truncated sequence).
[[nodiscard]] size_t utf8_valid_length(std::string_view s, size_t i);

// Decodes the well-formed sequence of length `len` at s[i].
[[nodiscard]] uint32_t utf8_decode(std::string_view s, size_t i, size_t len);

void utf8_append(std::string& out, uint32_t cp);

// Every byte that does not start a well-formed sequence becomes one U+FFFD (what
// llama.cpp's unicode_cpts_from_utf8 does to tokenizer input).
[[nodiscard]] std::string utf8_replace_invalid_bytes(std::string_view s);

// Every maximal ill-formed subpart becomes one U+FFFD (Unicode 3.9 "best practice", the
// policy of Python's decode(errors="replace") and Rust's from_utf8_lossy).
[[nodiscard]] std::string utf8_replace_invalid_subparts(std::string_view s);

[[nodiscard]] inline bool utf8_is_valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_valid_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// GPT-2's byte-level alphabet: each byte is shown as a printable code point (bytes that
// are printable Latin-1 map to themselves, the others to U+0100.. in order).
[[nodiscard]] const std::array<uint32_t, 256>& gpt2_byte_to_codepoint();
// The inverse: the byte a code point stands for, or -1 if it is not in the alphabet.
[[nodiscard]] int gpt2_codepoint_to_byte(uint32_t cp);

}  // namespace pagoda
