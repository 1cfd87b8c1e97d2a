// BLAKE2b (RFC 7693), keyed, with any digest length from 1 to 64 bytes. Written from the RFC
// for the prefix cache's block hashes: a keyed hash with a per-process random key means no
// client can craft prompts whose blocks collide with another client's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace pagoda {

class Blake2b {
 public:
  static constexpr size_t kMaxDigestBytes = 64;
  static constexpr size_t kMaxKeyBytes = 64;
  static constexpr size_t kBlockBytes = 128;

  // digest_bytes in [1, 64], key.size() in [0, 64]; anything else is a bug (PAGODA_CHECK).
  Blake2b(size_t digest_bytes, std::span<const uint8_t> key = {});

  void update(std::span<const uint8_t> data);
  // Writes digest_bytes bytes to out; the object must not be updated afterwards.
  void finish(std::span<uint8_t> out);

 private:
  void compress(bool last);

  std::array<uint64_t, 8> h_{};
  std::array<uint8_t, kBlockBytes> buf_{};
  size_t buf_len_ = 0;
  uint64_t count_lo_ = 0;  // bytes compressed so far (128-bit counter t0, t1)
  uint64_t count_hi_ = 0;
  size_t digest_bytes_;
};

}  // namespace pagoda
