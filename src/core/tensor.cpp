#include "core/tensor.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace pagoda {

namespace {
// Host tensors from this size on are anonymous mappings (see Tensor::host).
constexpr size_t kMappedBytes = size_t{1} << 20;
}  // namespace

std::string shape_string(const Shape& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

Tensor Tensor::view(DType dtype, Shape shape, const void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = const_cast<void*>(data);
  return t;
}

Tensor Tensor::host(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  const size_t bytes = t.nbytes();
  if (bytes >= kMappedBytes) {
    // Anonymous pages are zero and become resident only when touched: a KV cache sized for
    // the worst case costs memory only as far as it is used.
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fail("out of memory: cannot map ", bytes, " bytes for a tensor");
    t.storage_ = std::shared_ptr<void>(p, [bytes](void* q) { munmap(q, bytes); });
    t.data_ = p;
    return t;
  }
  // 64-byte alignment so that SIMD kernels may use aligned loads.
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  PAGODA_CHECK(p != nullptr);
  std::memset(p, 0, bytes);
  t.storage_ = std::shared_ptr<void>(p, std::free);
  t.data_ = p;
  return t;
}

Tensor Tensor::shared(DType dtype, Shape shape, std::shared_ptr<void> storage, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.storage_ = std::move(storage);
  t.data_ = data;
  return t;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

size_t Tensor::nbytes() const {
  const auto bytes = dtype_bytes(dtype_, static_cast<uint64_t>(numel()));
  PAGODA_CHECK(bytes.has_value());
  return *bytes;
}

size_t Tensor::row_bytes() const {
  const auto bytes = dtype_bytes(dtype_, static_cast<uint64_t>(row_numel()));
  PAGODA_CHECK(bytes.has_value());
  return *bytes;
}

Tensor Tensor::reshape(Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  PAGODA_CHECK(t.numel() == numel());
  return t;
}

Tensor Tensor::rows(int64_t begin, int64_t end) const {
  PAGODA_CHECK(ndim() >= 1 && 0 <= begin && begin <= end && end <= shape_[0]);
  Tensor t = *this;
  t.shape_[0] = end - begin;
  t.data_ = static_cast<uint8_t*>(data_) + static_cast<size_t>(begin) * row_bytes();
  return t;
}

}  // namespace pagoda
