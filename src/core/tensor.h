// A typed n-d array: a dtype, a row-major shape (outermost dimension first, as in
// PyTorch) and a pointer. It either views memory owned elsewhere (a weight in an mmap)
// or shares ownership of its storage. A backend decides where the memory lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"

namespace pagoda {

using Shape = std::vector<int64_t>;

std::string shape_string(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;

  // A view of memory owned by someone else, who must outlive the tensor.
  static Tensor view(DType dtype, Shape shape, const void* data);
  // A zero-filled host tensor that owns its memory.
  static Tensor host(DType dtype, Shape shape);
  // A tensor over storage it shares ownership of (backend allocations).
  static Tensor shared(DType dtype, Shape shape, std::shared_ptr<void> storage, void* data);

  [[nodiscard]] bool empty() const { return data_ == nullptr; }
  [[nodiscard]] DType dtype() const { return dtype_; }
  [[nodiscard]] const Shape& shape() const { return shape_; }
  [[nodiscard]] int ndim() const { return static_cast<int>(shape_.size()); }
  // dim(-1) is the innermost dimension.
  [[nodiscard]] int64_t dim(int i) const { return shape_[static_cast<size_t>(i < 0 ? ndim() + i : i)]; }
  [[nodiscard]] int64_t numel() const;
  [[nodiscard]] size_t nbytes() const;
  // Elements per outermost row: the product of every dimension but the first.
  [[nodiscard]] int64_t row_numel() const { return ndim() == 0 ? 1 : numel() / shape_[0]; }
  [[nodiscard]] size_t row_bytes() const;

  [[nodiscard]] void* raw() const { return data_; }
  template <class T>
  [[nodiscard]] T* data() const {
    return static_cast<T*>(data_);
  }

  // The same memory under another shape with the same number of elements.
  [[nodiscard]] Tensor reshape(Shape shape) const;
  // Rows [begin, end) of the outermost dimension.
  [[nodiscard]] Tensor rows(int64_t begin, int64_t end) const;

 private:
  DType dtype_ = DType::F32;
  Shape shape_;
  void* data_ = nullptr;
  std::shared_ptr<void> storage_;
};

}  // namespace pagoda
