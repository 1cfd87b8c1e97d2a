// Device copies of the small host arrays the Backend interface passes by pointer (token ids,
// positions, slot mappings, block tables, rope frequencies). One ForwardBatch hands every
// layer the same arrays, so a copy is looked up by content and made once per step, not once
// per layer. Lookups compare bytes, never just addresses: a host vector freed and
// reallocated at the same address with new contents must not hit.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pagoda::cuda {

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

 private:
  static constexpr size_t kEntries = 16;
  struct Entry {
    std::vector<uint8_t> bytes;
    void* device = nullptr;
    size_t capacity = 0;
    uint64_t last_use = 0;
  };
  cudaStream_t stream_;
  std::array<Entry, kEntries> entries_{};
  uint64_t clock_ = 0;
};

}  // namespace pagoda::cuda
