#include "backend/cuda/device_mirror.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "backend/cuda/cuda_check.h"

namespace pagoda::cuda {

DeviceMirror::~DeviceMirror() {
  for (Entry& e : entries_) {
    if (e.device != nullptr) cudaFreeAsync(e.device, stream_);
  }
}

CapturedArrays::~CapturedArrays() {
  for (void* p : buffers) cudaFree(p);
  if (input_block_ != nullptr) cudaFree(input_block_);
  if (staging_ != nullptr) cudaFreeHost(staging_);
  if (uploaded_ != nullptr) cudaEventDestroy(uploaded_);
}

CapturedArrays::CapturedArrays(CapturedArrays&& o) noexcept
    : inputs(std::move(o.inputs)),
      buffers(std::move(o.buffers)),
      input_block_(std::exchange(o.input_block_, nullptr)),
      staging_(std::exchange(o.staging_, nullptr)),
      input_bytes_(std::exchange(o.input_bytes_, 0)),
      flat_bytes_(std::exchange(o.flat_bytes_, 0)),
      uploaded_(std::exchange(o.uploaded_, nullptr)) {
  o.buffers.clear();
}

void CapturedArrays::allocate_inputs() {
  constexpr size_t kAlign = 256;  // every input starts as aligned as a cudaMalloc'd buffer
  input_bytes_ = 0;
  for (const bool tables : {false, true}) {  // flat arrays first: one transfer covers them
    for (GraphInput& in : inputs) {
      if ((in.row_bytes > 0) != tables) continue;
      in.staging_offset = input_bytes_;
      input_bytes_ += (std::max<size_t>(in.bytes, 1) + kAlign - 1) / kAlign * kAlign;
    }
    if (!tables) flat_bytes_ = input_bytes_;
  }
  if (input_bytes_ == 0) return;
  // cudaMalloc, not the stream's pool: a pool allocation during capture would be recorded.
  check(cudaMalloc(&input_block_, input_bytes_), "cudaMalloc (graph inputs)");
  check(cudaHostAlloc(&staging_, input_bytes_, cudaHostAllocDefault), "cudaHostAlloc (graph inputs)");
  check(cudaEventCreateWithFlags(&uploaded_, cudaEventDisableTiming), "cudaEventCreate (graph inputs)");
  for (GraphInput& in : inputs) in.device = static_cast<uint8_t*>(input_block_) + in.staging_offset;
}

void CapturedArrays::upload(cudaStream_t stream, size_t live_row_bytes) {
  if (input_bytes_ == 0) return;
  // A replay without a synchronization since the last would otherwise overwrite bytes the
  // last upload has not copied yet (each engine step synchronizes, so this rarely waits).
  check(cudaEventSynchronize(uploaded_), "cudaEventSynchronize (graph inputs)");
  auto* staging = static_cast<uint8_t*>(staging_);
  for (const GraphInput& in : inputs) {
    if (in.row_bytes == 0) std::memcpy(staging + in.staging_offset, in.host, in.bytes);
  }
  if (flat_bytes_ > 0) {
    check(cudaMemcpyAsync(input_block_, staging_, flat_bytes_, cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync (graph inputs)");
  }
  for (const GraphInput& in : inputs) {
    if (in.row_bytes == 0) continue;
    const size_t rows = in.bytes / in.row_bytes;
    const size_t live = live_row_bytes == 0 ? in.row_bytes : std::min(live_row_bytes, in.row_bytes);
    const auto* host = static_cast<const uint8_t*>(in.host);
    uint8_t* staged = staging + in.staging_offset;
    for (size_t r = 0; r < rows; ++r) std::memcpy(staged + r * in.row_bytes, host + r * in.row_bytes, live);
    check(cudaMemcpy2DAsync(in.device, in.row_bytes, staged, in.row_bytes, live, rows, cudaMemcpyHostToDevice, stream),
          "cudaMemcpy2DAsync (graph input table)");
  }
  check(cudaEventRecord(uploaded_, stream), "cudaEventRecord (graph inputs)");
}

void DeviceMirror::begin_capture(std::vector<GraphInput> inputs) {
  capture_ = std::make_unique<CapturedArrays>();
  capture_->inputs = std::move(inputs);
  capture_->allocate_inputs();
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
    if (h >= base && h + bytes <= base + in.bytes) return static_cast<uint8_t*>(in.device) + (h - base);
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
