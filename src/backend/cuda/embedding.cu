// Row gathers: token embeddings from a BF16 table, and picking F32 rows (the logit rows).
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"

namespace pagoda::cuda {

namespace {

template <class T>
__device__ float to_float(T v);
template <>
__device__ float to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <>
__device__ float to_float(float v) {
  return v;
}

// One block per output row. Ids were range-checked on the host (in a graph, when it was
// recorded); a placeholder is read where sample_async left its id.
template <class T>
__global__ void gather_rows(const T* table, const int32_t* ids, Ahead ahead, int64_t dim, float* out) {
  int32_t id = ids[blockIdx.x];
  if (id < 0) {
    const int32_t row = -id - 1;
    id = row < ahead.capacity ? ahead.ids[row] : 0;
    if (id < 0) id = 0;  // handed back: the runner recomputes that request
  }
  const T* src = table + static_cast<int64_t>(id) * dim;
  float* dst = out + blockIdx.x * dim;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) dst[i] = to_float(src[i]);
}

}  // namespace

void embedding_bf16(const __nv_bfloat16* table, const int32_t* ids, Ahead ahead, int n, int64_t dim, float* out,
                    cudaStream_t stream) {
  if (n <= 0) return;
  gather_rows<<<static_cast<unsigned>(n), 256, 0, stream>>>(table, ids, ahead, dim, out);
  check_launch("embedding_bf16");
}

void embedding_f32(const float* table, const int32_t* ids, Ahead ahead, int n, int64_t dim, float* out,
                   cudaStream_t stream) {
  if (n <= 0) return;
  gather_rows<<<static_cast<unsigned>(n), 256, 0, stream>>>(table, ids, ahead, dim, out);
  check_launch("embedding_f32");
}

}  // namespace pagoda::cuda
