// Device copies of the small host arrays the Backend interface passes by pointer (token ids,
// positions, slot mappings, block tables, rope frequencies). One ForwardBatch hands every
// layer the same arrays, so a copy is looked up by content and made once per step, not once
// per layer. Lookups compare bytes, never just addresses: a host vector freed and
// reallocated at the same address with new contents must not hit.
//
// While a graph is being captured the mirror copies nothing (a copy from pageable memory
// cannot be recorded): arrays inside the declared inputs get device buffers that the graph's
// replays refill from the same host addresses, and any other array is snapshotted and
// uploaded once when the capture ends.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace pagoda::cuda {

// A host array a graph reads, and where its bytes go before each replay: staged at
// staging_offset in the graph's pinned buffer, then copied with the other inputs to device.
struct GraphInput {
  const void* host = nullptr;
  size_t bytes = 0;
  void* device = nullptr;
  size_t staging_offset = 0;
  size_t row_bytes = 0;  // > 0: a table of rows, of which a replay may copy a prefix each
};

// What one captured graph's host arrays became: the inputs its replays refill, and every
// device buffer made for it (freed with it). The inputs live in one device block with a
// pinned twin, flat arrays first, so that they cross in a single transfer (one DMA, and the
// host never waits on a pageable copy's staging); each table follows in a transfer of its
// own, of only the live prefix of its rows (a block table is as wide as max_model_len: 8 MB
// at 256 rows of 128k tokens, of which a step reads the blocks its sequences have).
class CapturedArrays {
 public:
  std::vector<GraphInput> inputs;
  std::vector<void*> buffers;

  CapturedArrays() = default;
  ~CapturedArrays();
  CapturedArrays(CapturedArrays&&) noexcept;
  CapturedArrays& operator=(CapturedArrays&&) = delete;
  CapturedArrays(const CapturedArrays&) = delete;
  CapturedArrays& operator=(const CapturedArrays&) = delete;

  // Places the inputs in one device block and its pinned twin (device pointers set).
  void allocate_inputs();
  // Copies the inputs' current host bytes to their device buffers (of a table, the first
  // live_row_bytes of each row; 0: all); work queued on stream after it sees them. Waits
  // first for the previous upload to leave the pinned buffer.
  void upload(cudaStream_t stream, size_t live_row_bytes = 0);

 private:
  void* input_block_ = nullptr;  // device
  void* staging_ = nullptr;      // pinned host, the same layout
  size_t input_bytes_ = 0;
  size_t flat_bytes_ = 0;  // the flat inputs' part of the block, at its start
  cudaEvent_t uploaded_ = nullptr;  // the last upload's copy has read staging_
};

class DeviceMirror {
 public:
  explicit DeviceMirror(cudaStream_t stream) : stream_(stream) {}
  ~DeviceMirror();
  DeviceMirror(const DeviceMirror&) = delete;
  DeviceMirror& operator=(const DeviceMirror&) = delete;

  // Device memory holding the bytes at host (valid until that many other arrays have been
  // mirrored: kEntries). Work queued on the stream after this call sees the contents.
  [[nodiscard]] const void* get(const void* host, size_t bytes);
  template <class T>
  [[nodiscard]] const T* get(const T* host, size_t count) {
    return static_cast<const T*>(get(static_cast<const void*>(host), count * sizeof(T)));
  }

  // Capture mode (see the top of this file); inputs are (host address, bytes) ranges.
  void begin_capture(std::vector<GraphInput> inputs);
  // Ends capture mode: uploads the snapshots (synchronously) and hands over the buffers.
  [[nodiscard]] CapturedArrays end_capture();
  // Ends capture mode after a failed capture, freeing what it made.
  void abort_capture();

 private:
  static constexpr size_t kEntries = 16;
  struct Entry {
    std::vector<uint8_t> bytes;
    void* device = nullptr;
    size_t capacity = 0;
    uint64_t last_use = 0;
  };
  [[nodiscard]] const void* get_captured(const void* host, size_t bytes);

  cudaStream_t stream_;
  bool capturing_ = false;
  std::unique_ptr<CapturedArrays> capture_;
  std::vector<std::pair<void*, std::vector<uint8_t>>> snapshots_;  // device buffer, contents
  std::array<Entry, kEntries> entries_{};
  uint64_t clock_ = 0;
};

}  // namespace pagoda::cuda
