#include "kv/blake2b.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace pagoda {
namespace {

constexpr std::array<uint64_t, 8> kIv = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};

constexpr uint8_t kSigma[12][16] = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
                                    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
                                    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
                                    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
                                    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
                                    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
                                    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
                                    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
                                    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
                                    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
                                    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
                                    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

constexpr uint64_t rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void mix(uint64_t* v, int a, int b, int c, int d, uint64_t x, uint64_t y) {
  v[a] = v[a] + v[b] + x;
  v[d] = rotr(v[d] ^ v[a], 32);
  v[c] = v[c] + v[d];
  v[b] = rotr(v[b] ^ v[c], 24);
  v[a] = v[a] + v[b] + y;
  v[d] = rotr(v[d] ^ v[a], 16);
  v[c] = v[c] + v[d];
  v[b] = rotr(v[b] ^ v[c], 63);
}

}  // namespace

Blake2b::Blake2b(size_t digest_bytes, std::span<const uint8_t> key) : digest_bytes_(digest_bytes) {
  PAGODA_CHECK(digest_bytes >= 1 && digest_bytes <= kMaxDigestBytes);
  PAGODA_CHECK(key.size() <= kMaxKeyBytes);
  h_ = kIv;
  // Parameter block word 0: digest length, key length, fanout 1, depth 1 (sequential mode).
  h_[0] ^= 0x01010000ULL ^ (static_cast<uint64_t>(key.size()) << 8) ^ digest_bytes;
  if (!key.empty()) {
    // The key is padded to a full block and processed as the first block (RFC 7693 3.3).
    std::array<uint8_t, kBlockBytes> block{};
    std::copy(key.begin(), key.end(), block.begin());
    update(block);
  }
}

void Blake2b::compress(bool last) {
  uint64_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = load_le64(buf_.data() + 8 * i);
  uint64_t v[16];
  for (int i = 0; i < 8; ++i) {
    v[i] = h_[i];
    v[i + 8] = kIv[i];
  }
  v[12] ^= count_lo_;
  v[13] ^= count_hi_;
  if (last) v[14] = ~v[14];
  for (const auto& s : kSigma) {
    mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (int i = 0; i < 8; ++i) h_[i] ^= v[i] ^ v[i + 8];
}

void Blake2b::update(std::span<const uint8_t> data) {
  size_t pos = 0;
  while (pos < data.size()) {
    // A full buffer is compressed only once more input arrives: the final block must be
    // compressed with the "last" flag, and it may be a full one.
    if (buf_len_ == kBlockBytes) {
      count_lo_ += kBlockBytes;
      if (count_lo_ < kBlockBytes) ++count_hi_;
      compress(false);
      buf_len_ = 0;
    }
    const size_t n = std::min(kBlockBytes - buf_len_, data.size() - pos);
    std::memcpy(buf_.data() + buf_len_, data.data() + pos, n);
    buf_len_ += n;
    pos += n;
  }
}

void Blake2b::finish(std::span<uint8_t> out) {
  PAGODA_CHECK(out.size() == digest_bytes_);
  count_lo_ += buf_len_;
  if (count_lo_ < buf_len_) ++count_hi_;
  std::fill(buf_.begin() + static_cast<std::ptrdiff_t>(buf_len_), buf_.end(), uint8_t{0});
  compress(true);
  for (size_t i = 0; i < digest_bytes_; ++i) {
    out[i] = static_cast<uint8_t>(h_[i / 8] >> (8 * (i % 8)));
  }
}

}  // namespace pagoda
