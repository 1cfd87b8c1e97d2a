#include "backend/cuda/capture_arena.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <iterator>

#include "backend/cuda/cuda_check.h"

namespace pagoda::cuda {

CaptureArena::~CaptureArena() {
  for (Chunk& c : chunks_) cudaFree(c.base);
}

void CaptureArena::reset_free_ranges() {
  for (Chunk& c : chunks_) c.free = {{0, c.bytes}};
}

size_t CaptureArena::capacity() const {
  size_t total = 0;
  for (const Chunk& c : chunks_) total += c.bytes;
  return total;
}

void* CaptureArena::allocate(size_t bytes) {
  bytes = round_up(std::max<size_t>(bytes, 1));
  for (Chunk& c : chunks_) {  // first fit
    for (auto it = c.free.begin(); it != c.free.end(); ++it) {
      if (it->second < bytes) continue;
      const size_t offset = it->first, left = it->second - bytes;
      c.free.erase(it);
      if (left > 0) c.free.emplace(offset + bytes, left);
      return c.base + offset;
    }
  }
  Chunk c;
  c.bytes = std::max(bytes, kChunk);
  void* p = nullptr;
  // cudaMalloc is no stream operation: allowed while the stream records (relaxed mode).
  check(cudaMalloc(&p, c.bytes), "cudaMalloc (capture arena)");
  c.base = static_cast<char*>(p);
  if (c.bytes > bytes) c.free.emplace(bytes, c.bytes - bytes);
  chunks_.push_back(std::move(c));
  return p;
}

void CaptureArena::release(void* p, size_t bytes, uint64_t epoch) {
  if (epoch != epoch_) return;
  bytes = round_up(std::max<size_t>(bytes, 1));
  auto* q = static_cast<char*>(p);
  for (Chunk& c : chunks_) {
    if (q < c.base || q >= c.base + c.bytes) continue;
    size_t offset = static_cast<size_t>(q - c.base), length = bytes;
    auto next = c.free.lower_bound(offset);
    if (next != c.free.end() && offset + length == next->first) {  // merge with the range after
      length += next->second;
      next = c.free.erase(next);
    }
    if (next != c.free.begin()) {  // and with the one before
      const auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        length += prev->second;
        c.free.erase(prev);
      }
    }
    c.free.emplace(offset, length);
    return;
  }
}

}  // namespace pagoda::cuda
