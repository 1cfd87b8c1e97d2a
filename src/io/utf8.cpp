#include "io/utf8.h"

namespace pagoda {

size_t utf8_valid_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  const size_t left = s.size() - i;
  // Ranges of the second byte per lead byte (Unicode Table 3-7), which excludes overlong
  // forms, surrogates and code points above U+10FFFF.
  uint8_t lo = 0x80, hi = 0xBF;
  size_t len = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (left < len) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

uint32_t utf8_decode(std::string_view s, size_t i, size_t len) {
  const auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(s[k])); };
  switch (len) {
    case 1:
      return byte(i);
    case 2:
      return ((byte(i) & 0x1F) << 6) | (byte(i + 1) & 0x3F);
    case 3:
      return ((byte(i) & 0x0F) << 12) | ((byte(i + 1) & 0x3F) << 6) | (byte(i + 2) & 0x3F);
    default:
      return ((byte(i) & 0x07) << 18) | ((byte(i + 1) & 0x3F) << 12) |
             ((byte(i + 2) & 0x3F) << 6) | (byte(i + 3) & 0x3F);
  }
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the maximal prefix of a well-formed sequence at s[i] (at least 1): the bytes
// one U+FFFD replaces when the sequence is ill-formed.
size_t maximal_subpart(std::string_view s, size_t i) {
  const uint8_t b0 = static_cast<uint8_t>(s[i]);
  uint8_t lo = 0x80, hi = 0xBF;
  size_t len = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 1;
  }
  size_t k = 1;
  for (; k < len && i + k < s.size(); ++k) {
    const uint8_t b = static_cast<uint8_t>(s[i + k]);
    const bool ok = k == 1 ? (b >= lo && b <= hi) : ((b & 0xC0) == 0x80);
    if (!ok) break;
  }
  return k;
}

}  // namespace

std::string utf8_replace_invalid_bytes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_valid_length(s, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

std::string utf8_replace_invalid_subparts(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_valid_length(s, i);
    if (n == 0) {
      out += kReplacement;
      i += maximal_subpart(s, i);
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

namespace {

struct Gpt2Maps {
  std::array<uint32_t, 256> byte_to_cp{};
  std::array<int16_t, 512> cp_to_byte{};  // every mapped code point is below U+0144

  Gpt2Maps() {
    cp_to_byte.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      byte_to_cp[b] = printable ? b : next++;
      cp_to_byte[byte_to_cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const Gpt2Maps& gpt2_maps() {
  static const Gpt2Maps maps;
  return maps;
}

}  // namespace

const std::array<uint32_t, 256>& gpt2_byte_to_codepoint() { return gpt2_maps().byte_to_cp; }

int gpt2_codepoint_to_byte(uint32_t cp) {
  return cp < 512 ? gpt2_maps().cp_to_byte[cp] : -1;
}

}  // namespace pagoda
