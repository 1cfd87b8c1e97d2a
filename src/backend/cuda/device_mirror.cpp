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

CapturedArrays::~CapturedArrays() {
  for (void* p : buffers) cudaFree(p);
}

CapturedArrays::CapturedArrays(CapturedArrays&& o) noexcept
    : inputs(std::move(o.inputs)), buffers(std::move(o.buffers)) {
  o.buffers.clear();
}

void DeviceMirror::begin_capture(std::vector<GraphInput> inputs) {
  capture_ = std::make_unique<CapturedArrays>();
  capture_->inputs = std::move(inputs);
  snapshots_.clear();
  capturing_ = true;
}

CapturedArrays DeviceMirror::end_capture() {
  capturing_ = false;
  for (const auto& [device, bytes] : snapshots_) {
    check(cudaMemcpy(device, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "cudaMemcpy (graph constants)");
  }
  snapshots_.clear();
  CapturedArrays out = std::move(*capture_);
  capture_.reset();
  // Inputs no op read need no copy.
  std::erase_if(out.inputs, [](const GraphInput& in) { return in.device == nullptr; });
  return out;
}

void DeviceMirror::abort_capture() {
  capturing_ = false;
  snapshots_.clear();
  capture_.reset();
}

const void* DeviceMirror::get_captured(const void* host, size_t bytes) {
  const auto* h = static_cast<const uint8_t*>(host);
  for (GraphInput& in : capture_->inputs) {
    const auto* base = static_cast<const uint8_t*>(in.host);
    if (h >= base && h + bytes <= base + in.bytes) {
      if (in.device == nullptr) {
        // cudaMalloc, not the stream's pool: a pool allocation here would be recorded.
        check(cudaMalloc(&in.device, std::max<size_t>(in.bytes, 1)), "cudaMalloc (graph input)");
        capture_->buffers.push_back(in.device);
      }
      return static_cast<uint8_t*>(in.device) + (h - base);
    }
  }
  void* device = nullptr;
  check(cudaMalloc(&device, bytes), "cudaMalloc (graph constant)");
  capture_->buffers.push_back(device);
  snapshots_.emplace_back(device, std::vector<uint8_t>(h, h + bytes));
  return device;
}

const void* DeviceMirror::get(const void* host, size_t bytes) {
  ++clock_;
  static const uint8_t kNothing = 0;
  if (bytes == 0) {  // an empty array still needs a valid pointer
    host = &kNothing;
    bytes = 1;
  }
  if (capturing_) return get_captured(host, bytes);
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
