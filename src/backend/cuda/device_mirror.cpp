#include "backend/cuda/device_mirror.h"

#include <algorithm>
#include <cstring>

#include "backend/cuda/cuda_check.h"

namespace pagoda::cuda {

DeviceMirror::~DeviceMirror() {
  for (Entry& e : entries_) {
    if (e.device != nullptr) cudaFreeAsync(e.device, stream_);
  }
}

const void* DeviceMirror::get(const void* host, size_t bytes) {
  ++clock_;
  static const uint8_t kNothing = 0;
  if (bytes == 0) {  // an empty array still needs a valid pointer
    host = &kNothing;
    bytes = 1;
  }
  for (Entry& e : entries_) {
    if (e.device != nullptr && e.bytes.size() == bytes && std::memcmp(e.bytes.data(), host, bytes) == 0) {
      e.last_use = clock_;
      return e.device;
    }
  }
  Entry& e = *std::min_element(entries_.begin(), entries_.end(),
                               [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
  if (e.capacity < bytes) {
    if (e.device != nullptr) check(cudaFreeAsync(e.device, stream_), "cudaFreeAsync");
    e.capacity = std::max<size_t>(bytes, 4096);
    check(cudaMallocAsync(&e.device, e.capacity, stream_), "cudaMallocAsync (mirror)");
  }
  e.bytes.assign(static_cast<const uint8_t*>(host), static_cast<const uint8_t*>(host) + bytes);
  // From pageable memory: the call returns once the bytes are staged, so e.bytes may change.
  check(cudaMemcpyAsync(e.device, e.bytes.data(), bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (mirror)");
  e.last_use = clock_;
  return e.device;
}

}  // namespace pagoda::cuda
