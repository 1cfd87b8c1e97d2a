#include "kv/free_block_queue.h"

#include "core/error.h"

namespace pagoda {

BlockId FreeBlockQueue::pop_front() {
  PAGODA_CHECK(head_ != kEnd);
  const BlockId id = head_;
  remove(id);
  return id;
}

void FreeBlockQueue::remove(BlockId id) {
  KVBlock& b = blocks_[static_cast<size_t>(id)];
  PAGODA_CHECK(b.in_free_queue);
  if (b.prev_free == kEnd) {
    head_ = b.next_free;
  } else {
    blocks_[static_cast<size_t>(b.prev_free)].next_free = b.next_free;
  }
  if (b.next_free == kEnd) {
    tail_ = b.prev_free;
  } else {
    blocks_[static_cast<size_t>(b.next_free)].prev_free = b.prev_free;
  }
  b.prev_free = b.next_free = kEnd;
  b.in_free_queue = false;
  --size_;
}

void FreeBlockQueue::push_back(BlockId id) {
  KVBlock& b = blocks_[static_cast<size_t>(id)];
  PAGODA_CHECK(!b.in_free_queue);
  b.prev_free = tail_;
  b.next_free = kEnd;
  if (tail_ == kEnd) {
    head_ = id;
  } else {
    blocks_[static_cast<size_t>(tail_)].next_free = id;
  }
  tail_ = id;
  b.in_free_queue = true;
  ++size_;
}

std::vector<BlockId> FreeBlockQueue::to_vector() const {
  std::vector<BlockId> out;
  out.reserve(size_);
  for (BlockId id = head_; id != kEnd; id = blocks_[static_cast<size_t>(id)].next_free) {
    out.push_back(id);
  }
  return out;
}

}  // namespace pagoda
