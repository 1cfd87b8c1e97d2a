// Content hashes of full KV blocks for automatic prefix caching. A block's hash covers its
// parent block's hash, its token ids and the request's extra keys, so equal hashes mean equal
// prefixes. The hash is keyed BLAKE2b with a per-process random key; hits are still verified
// against the stored tokens (see BlockPool), so even a collision never shares KV.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>

#include "kv/types.h"

namespace pagoda {

struct BlockHash {
  std::array<uint8_t, 32> bytes{};
  friend bool operator==(const BlockHash&, const BlockHash&) = default;
};

// The hash parent of a request's first block.
inline constexpr BlockHash kNoParentHash{};

// Everything besides token ids that decides whether two requests may share a block's KV.
struct ExtraKeys {
  std::string cache_salt;  // isolates tenants: blocks are shared only with the same salt
  int64_t lora_id = 0;     // 0: the base model (LoRA adapters are not wired up yet)
  friend bool operator==(const ExtraKeys&, const ExtraKeys&) = default;
};

// A policy value so tests can inject collisions; production uses keyed_block_hasher().
using BlockHasher = std::function<BlockHash(
    const BlockHash& parent, std::span<const TokenId> tokens, const ExtraKeys& extra)>;

// Keyed BLAKE2b-256 with a key drawn from std::random_device once per process.
[[nodiscard]] BlockHasher keyed_block_hasher();

// The same hash with an explicit key (for tests: equal keys give equal hashes).
[[nodiscard]] BlockHash hash_block(std::span<const uint8_t> key, const BlockHash& parent,
                                   std::span<const TokenId> tokens, const ExtraKeys& extra);

}  // namespace pagoda

template <>
struct std::hash<pagoda::BlockHash> {
  size_t operator()(const pagoda::BlockHash& h) const noexcept {
    size_t v;  // the bytes are already uniformly random: any 8 of them will do
    std::memcpy(&v, h.bytes.data(), sizeof v);
    return v;
  }
};
