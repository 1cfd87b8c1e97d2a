#include "core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace pagoda {

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
