// Row gathers: token embeddings from a BF16 or F32 table into F32 rows.
//
// A decode step starts with one row (8 KB of BF16 at Llama-3.1-8B's width) that nothing can
// overlap but the next kernel's ramp: the row is read with 16-byte loads, all of a thread's
// in flight before any is stored (one trip to memory, where a loop of 2-byte loads took
// one a pass: ~10 us on an H100), and the gather is launched with programmatic dependent
// launch (pdl.h) so that the qkv GEMV after it requests its weights meanwhile.
#include <cstdint>
#include <type_traits>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pdl.h"

namespace pagoda::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kInFlight = 4;  // 16-byte loads a thread issues before storing

// A 16-byte chunk of a T row as F32 at dst (16-byte aligned).
template <class T>
__device__ __forceinline__ void store_chunk(const uint4& chunk, float* dst) {
  if constexpr (std::is_same_v<T, float>) {
    *reinterpret_cast<uint4*>(dst) = chunk;
  } else {
    const auto* p = reinterpret_cast<const __nv_bfloat162*>(&chunk);
    auto* d = reinterpret_cast<float4*>(dst);
    const float2 a = __bfloat1622float2(p[0]), b = __bfloat1622float2(p[1]);
    const float2 c = __bfloat1622float2(p[2]), e = __bfloat1622float2(p[3]);
    d[0] = make_float4(a.x, a.y, b.x, b.y);
    d[1] = make_float4(c.x, c.y, e.x, e.y);
  }
}

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(float v) { return v; }

// One block per output row. Ids were range-checked on the host (in a graph, when it was
// recorded); a placeholder is read where sample_async left its id. vectors: the rows are
// 16-byte aligned and dim a whole number of 16-byte chunks.
template <class T>
__global__ void __launch_bounds__(kThreads)
    gather_rows(const T* table, const int32_t* ids, Ahead ahead, int64_t dim, bool vectors, float* out) {
  pdl_launch_dependents();
  pdl_wait();  // ids and the placeholders' ids were written by the step before
  int32_t id = ids[blockIdx.x];
  if (id < 0) {
    const int32_t row = -id - 1;
    id = row < ahead.capacity ? ahead.ids[row] : 0;
    if (id < 0) id = 0;  // handed back: the runner recomputes that request
  }
  const T* src = table + static_cast<int64_t>(id) * dim;
  float* dst = out + blockIdx.x * dim;
  if (!vectors) {
    for (int64_t i = threadIdx.x; i < dim; i += kThreads) dst[i] = to_float(src[i]);
    return;
  }
  constexpr int kPerChunk = 16 / sizeof(T);
  const int64_t chunks = dim / kPerChunk;
  const auto* src_chunks = reinterpret_cast<const uint4*>(src);
  for (int64_t c0 = threadIdx.x; c0 < chunks; c0 += kInFlight * kThreads) {
    uint4 chunk[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int64_t c = c0 + u * kThreads;
      if (c < chunks) chunk[u] = src_chunks[c];
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int64_t c = c0 + u * kThreads;
      if (c < chunks) store_chunk<T>(chunk[u], dst + c * kPerChunk);
    }
  }
}

template <class T>
void gather(const T* table, const int32_t* ids, Ahead ahead, int n, int64_t dim, float* out, cudaStream_t stream,
            const char* what) {
  if (n <= 0) return;
  constexpr int64_t kPerChunk = 16 / sizeof(T);
  const bool vectors = dim % kPerChunk == 0 && reinterpret_cast<uintptr_t>(table) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(out) % 16 == 0;
  launch_pdl(gather_rows<T>, dim3(static_cast<unsigned>(n)), dim3(kThreads), 0, stream, what, table, ids, ahead, dim,
             vectors, out);
}

}  // namespace

void embedding_bf16(const __nv_bfloat16* table, const int32_t* ids, Ahead ahead, int n, int64_t dim, float* out,
                    cudaStream_t stream) {
  gather(table, ids, ahead, n, dim, out, stream, "embedding_bf16");
}

void embedding_f32(const float* table, const int32_t* ids, Ahead ahead, int n, int64_t dim, float* out,
                   cudaStream_t stream) {
  gather(table, ids, ahead, n, dim, out, stream, "embedding_f32");
}

}  // namespace pagoda::cuda
