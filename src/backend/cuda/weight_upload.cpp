#include "backend/cuda/weight_upload.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/dequant.h"
#include "backend/cuda/cuda_check.h"
#include "core/half.h"

namespace pagoda::cuda {

WeightUploader::WeightUploader(cudaStream_t stream) : stream_(stream) {
  for (size_t i = 0; i < staging_.size(); ++i) {
    check(cudaMallocHost(&staging_[i], kStagingBytes), "cudaMallocHost (staging)");
    check(cudaEventCreateWithFlags(&free_[i], cudaEventDisableTiming), "cudaEventCreate");
  }
}

WeightUploader::~WeightUploader() {
  for (size_t i = 0; i < staging_.size(); ++i) {
    cudaEventSynchronize(free_[i]);
    cudaEventDestroy(free_[i]);
    cudaFreeHost(staging_[i]);
  }
}

void WeightUploader::copy(const Tensor& host, Tensor& dst) {
  PAGODA_CHECK(host.numel() == dst.numel());
  PAGODA_CHECK(dst.dtype() == DType::BF16 || dst.dtype() == DType::F32);
  if (host.numel() == 0) return;
  // Rows are the unit of conversion: a block-quantized row is whole blocks.
  const int64_t row = host.ndim() <= 1 ? host.numel() : host.dim(-1);
  const int64_t rows = host.numel() / row;
  const size_t src_row_bytes = host.ndim() <= 1 ? host.nbytes() : host.nbytes() / static_cast<size_t>(rows);
  const size_t out_elem = dst.dtype() == DType::BF16 ? 2 : 4;
  const size_t out_row_bytes = static_cast<size_t>(row) * out_elem;
  if (out_row_bytes > kStagingBytes) fail("upload: a row of ", row, " elements exceeds the staging buffer");
  const int64_t rows_per_chunk = static_cast<int64_t>(kStagingBytes / out_row_bytes);
  const bool verbatim = host.dtype() == dst.dtype();
  std::vector<float> f32(verbatim || dst.dtype() == DType::F32 ? 0 : static_cast<size_t>(row));

  const auto* src = static_cast<const uint8_t*>(host.raw());
  auto* out = static_cast<uint8_t*>(dst.raw());
  int slot = 0;
  for (int64_t r0 = 0; r0 < rows; r0 += rows_per_chunk, slot ^= 1) {
    const int64_t n = std::min(rows_per_chunk, rows - r0);
    check(cudaEventSynchronize(free_[static_cast<size_t>(slot)]), "cudaEventSynchronize (staging)");
    auto* stage = static_cast<uint8_t*>(staging_[static_cast<size_t>(slot)]);
    for (int64_t r = 0; r < n; ++r) {
      const uint8_t* in = src + static_cast<size_t>(r0 + r) * src_row_bytes;
      uint8_t* to = stage + static_cast<size_t>(r) * out_row_bytes;
      if (verbatim) {
        std::memcpy(to, in, out_row_bytes);
      } else if (dst.dtype() == DType::F32) {
        cpu::dequantize_row(host.dtype(), in, reinterpret_cast<float*>(to), row);
      } else {
        cpu::dequantize_row(host.dtype(), in, f32.data(), row);
        auto* bf = reinterpret_cast<uint16_t*>(to);
        for (int64_t i = 0; i < row; ++i) bf[i] = f32_to_bf16(f32[static_cast<size_t>(i)]);
      }
    }
    check(cudaMemcpyAsync(out + static_cast<size_t>(r0) * out_row_bytes, stage, static_cast<size_t>(n) * out_row_bytes,
                          cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (upload)");
    check(cudaEventRecord(free_[static_cast<size_t>(slot)], stream_), "cudaEventRecord");
  }
}

}  // namespace pagoda::cuda
