// Device memory for the tensors ops allocate while a graph is being recorded.
//
// A stream-ordered allocation (cudaMallocAsync) made during stream capture becomes a memory
// node of the graph, and its free a second one: a decode step's forward pass allocates a few
// temporaries a layer, so its graph held hundreds of such nodes besides its kernels. A kernel
// that follows a memory node depends on that node, not programmatically on the kernel before
// it, so the overlap of programmatic dependent launch (pdl.h) was lost at every one of them:
// on an H100 a batch-1 decode step replayed from such a graph took 5.98 ms, eager 5.90-5.95;
// with the arena the graph is kernels only and the step 5.80 ms (tools/device/NOTES.md,
// twenty-second run).
//
// The arena hands out ranges of memory it cudaMalloc'ed instead, reusing freed ranges within
// a recording by host bookkeeping alone: nothing is recorded. Every graph draws from the
// same arena and a new recording starts with all of it free: graphs run one at a time on
// the backend's stream, so one replay may overwrite whatever an earlier replay of any graph
// left there (a graph's outputs are read before the next replay; backend.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace pagoda::cuda {

class CaptureArena {
 public:
  CaptureArena() = default;
  ~CaptureArena();
  CaptureArena(const CaptureArena&) = delete;
  CaptureArena& operator=(const CaptureArena&) = delete;

  // A new recording: every range is free again, whoever still holds one.
  void begin_recording() {
    ++epoch_;
    reset_free_ranges();
  }
  // bytes (rounded up to kAlign) of device memory; grows the arena when no free range fits.
  [[nodiscard]] void* allocate(size_t bytes);
  // Gives back a range allocate() handed out during recording `epoch` (a range of an older
  // recording is already free again: ignored).
  void release(void* p, size_t bytes, uint64_t epoch);
  [[nodiscard]] uint64_t epoch() const { return epoch_; }
  [[nodiscard]] size_t capacity() const;

  static constexpr size_t kAlign = 256;             // as cudaMalloc's
  static constexpr size_t kChunk = size_t{32} << 20;  // the least the arena grows by

 private:
  struct Chunk {
    char* base = nullptr;
    size_t bytes = 0;
    std::map<size_t, size_t> free;  // offset -> length, coalesced
  };
  void reset_free_ranges();
  static size_t round_up(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

  std::vector<Chunk> chunks_;
  uint64_t epoch_ = 0;
};

}  // namespace pagoda::cuda
