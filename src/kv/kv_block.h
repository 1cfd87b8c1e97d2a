// One fixed-size block of the paged KV cache as the block pool sees it: a ref count, the
// links of the free queue it may sit in, and (once full and cached) its content hash.
#pragma once

#include <cstdint>
#include <optional>

#include "kv/block_hash.h"
#include "kv/types.h"

namespace pagoda {

// A block as it was at one point: equal refs mean the same KV content.
struct BlockRef {
  BlockId id = kNullBlockId;
  uint64_t generation = 0;
  friend bool operator==(const BlockRef&, const BlockRef&) = default;
};

struct KVBlock {
  BlockId id = kNullBlockId;
  int ref_cnt = 0;  // number of live requests whose block table holds this block
  // Bumped each time the block is handed out anew, i.e. whenever its content may change.
  uint64_t generation = 0;
  // Set while the block is in the prefix cache (full, hashed); cleared on eviction.
  std::optional<BlockHash> hash;
  // Intrusive links of FreeBlockQueue; meaningful only while in_free_queue.
  BlockId prev_free = -1;
  BlockId next_free = -1;
  bool in_free_queue = false;
};

}  // namespace pagoda
