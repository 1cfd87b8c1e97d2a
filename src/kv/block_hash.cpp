#include "kv/block_hash.h"

#include <random>
#include <vector>

#include "kv/blake2b.h"

namespace pagoda {
namespace {

void put_u64(Blake2b& h, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  h.update(b);
}

std::array<uint8_t, 32> process_key() {
  std::random_device rd;
  std::array<uint8_t, 32> key{};
  for (size_t i = 0; i < key.size(); i += 4) {
    const uint32_t r = rd();
    for (size_t j = 0; j < 4; ++j) key[i + j] = static_cast<uint8_t>(r >> (8 * j));
  }
  return key;
}

}  // namespace

BlockHash hash_block(std::span<const uint8_t> key, const BlockHash& parent,
                     std::span<const TokenId> tokens, const ExtraKeys& extra) {
  // Every variable-length field is length-prefixed, so no two inputs share an encoding.
  Blake2b h(32, key);
  h.update(parent.bytes);
  put_u64(h, tokens.size());
  for (const TokenId t : tokens) put_u64(h, static_cast<uint32_t>(t));
  put_u64(h, static_cast<uint64_t>(extra.lora_id));
  put_u64(h, extra.cache_salt.size());
  h.update({reinterpret_cast<const uint8_t*>(extra.cache_salt.data()), extra.cache_salt.size()});
  BlockHash out;
  h.finish(out.bytes);
  return out;
}

BlockHasher keyed_block_hasher() {
  static const std::array<uint8_t, 32> key = process_key();
  return [](const BlockHash& parent, std::span<const TokenId> tokens, const ExtraKeys& extra) {
    return hash_block(key, parent, tokens, extra);
  };
}

}  // namespace pagoda
