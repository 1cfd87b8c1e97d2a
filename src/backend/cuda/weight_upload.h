// Copies a host tensor (often a view into the checkpoint's mmap) to device memory through
// two pinned staging buffers: the host converts chunk i + 1 (dequantizing block formats,
// rounding to BF16) while the DMA engine copies chunk i.
#pragma once

#include <cuda_runtime.h>

#include <array>

#include "core/tensor.h"

namespace pagoda::cuda {

class WeightUploader {
 public:
  explicit WeightUploader(cudaStream_t stream);
  ~WeightUploader();
  WeightUploader(const WeightUploader&) = delete;
  WeightUploader& operator=(const WeightUploader&) = delete;

  // Writes host's values into dst (same number of elements; dst is BF16 or F32 device memory).
  void copy(const Tensor& host, Tensor& dst);

 private:
  static constexpr size_t kStagingBytes = size_t{64} << 20;
  cudaStream_t stream_;
  std::array<void*, 2> staging_{};
  std::array<cudaEvent_t, 2> free_{};  // recorded when the DMA out of a staging buffer ends
};

}  // namespace pagoda::cuda
