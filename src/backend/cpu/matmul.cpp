#include "backend/cpu/matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace pagoda::cpu {

namespace {

// Activation rows per task when a batch is split across threads as well: large enough
// that re-dequantizing a weight tile per chunk costs little next to its dot products.
constexpr int64_t kMinRowsPerChunk = 16;
// Up to this many activation rows, quantized weights are dequantized in registers and
// consumed at once; beyond, a dequantized tile in a buffer is reused for every row.
constexpr int64_t kMaxFusedRows = 4;
// Bytes of activations per block of rows (see x_block below): well inside a 1-2 MiB L2.
constexpr int64_t kActivationBlockBytes = 256 << 10;

}  // namespace

void matmul(ThreadPool& pool, const VecDotKernels& kernels, const float* x, int64_t n, int64_t k,
            const void* w, DType w_type, int64_t m, float* out) {
  if (n == 0 || m == 0) return;
  const DTypeInfo& info = dtype_info(w_type);
  PAGODA_CHECK(k % info.block_size == 0);
  const size_t w_row_bytes = static_cast<size_t>(k / info.block_size) * static_cast<size_t>(info.block_bytes);
  const auto* w_bytes = static_cast<const uint8_t*>(w);

  const int64_t num_tiles = (m + kTileRows - 1) / kTileRows;
  // Split the batch too when there are too few weight tiles to keep every thread busy.
  const int64_t threads = pool.num_threads();
  int64_t num_chunks = 1;
  if (num_tiles < 4 * threads) {
    num_chunks = std::clamp<int64_t>(4 * threads / num_tiles, 1, std::max<int64_t>(1, n / kMinRowsPerChunk));
  }
  const int64_t chunk_rows = (n + num_chunks - 1) / num_chunks;

  // Activation rows are visited in blocks that stay in L2 while a thread's weight tiles
  // pass over them; a tile is dequantized again per block, which costs little next to
  // the block's dot products.
  const int64_t x_block = std::max<int64_t>(kTileRows, kActivationBlockBytes / (k * static_cast<int64_t>(sizeof(float))));

  pool.parallel_for(num_tiles * num_chunks, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> buffer;
    if (w_type != DType::F32 && buffer.size() < static_cast<size_t>(kTileRows * k)) {
      buffer.resize(static_cast<size_t>(kTileRows * k));
    }
    for (int64_t xb = 0; xb < n; xb += x_block) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t tile = task % num_tiles;
        const int64_t chunk0 = (task / num_tiles) * chunk_rows;
        const int64_t row0 = std::max(chunk0, xb);
        const int64_t row_end = std::min({chunk0 + chunk_rows, xb + x_block, n});
        if (row0 >= row_end) continue;
        const int rows = static_cast<int>(row_end - row0);
        const int64_t j0 = tile * kTileRows;
        const int nw = static_cast<int>(std::min<int64_t>(kTileRows, m - j0));
        if (info.quantized && n <= kMaxFusedRows) {
          for (int j = 0; j < nw; ++j) {
            kernels.dot_quant_rows(w_type, w_bytes + static_cast<size_t>(j0 + j) * w_row_bytes, x + row0 * k, rows,
                                   k, out + row0 * m + j0 + j, m);
          }
          continue;
        }
        const float* tile_w;
        if (w_type == DType::F32) {
          tile_w = reinterpret_cast<const float*>(w_bytes + static_cast<size_t>(j0) * w_row_bytes);
        } else {
          for (int j = 0; j < nw; ++j) {
            kernels.dequant_row(w_type, w_bytes + static_cast<size_t>(j0 + j) * w_row_bytes, buffer.data() + j * k, k);
          }
          tile_w = buffer.data();
        }
        kernels.dot_tile(x + row0 * k, rows, tile_w, nw, k, out + row0 * m + j0, m);
      }
    }
  });
}

}  // namespace pagoda::cpu
