// The pool's free blocks in eviction order: the head is handed out (and evicted from the
// prefix cache) first. An intrusive doubly linked list over the pool's KVBlock array, so
// taking a cached block back out of the middle on a prefix hit is O(1), as in vLLM's
// FreeKVCacheBlockQueue.
#pragma once

#include <cstddef>
#include <vector>

#include "kv/kv_block.h"

namespace pagoda {

class FreeBlockQueue {
 public:
  // blocks must outlive the queue and keep its size. Starts empty.
  explicit FreeBlockQueue(std::vector<KVBlock>& blocks) : blocks_(blocks) {}

  [[nodiscard]] size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }

  // Removes and returns the head; the queue must not be empty.
  BlockId pop_front();
  // Unlinks a block from anywhere in the queue; it must be in the queue.
  void remove(BlockId id);
  // Appends at the tail (evicted last); the block must not be in the queue.
  void push_back(BlockId id);

  // Head to tail, for tests and invariant checks.
  [[nodiscard]] std::vector<BlockId> to_vector() const;

 private:
  static constexpr BlockId kEnd = -1;

  std::vector<KVBlock>& blocks_;
  BlockId head_ = kEnd;
  BlockId tail_ = kEnd;
  size_t size_ = 0;
};

}  // namespace pagoda
