// out[n, m] = x[n, k] @ w[m, k]^T for weights in any dtype: the driver that tiles the
// weight rows, dequantizes each tile once and reuses it for every activation row.
#pragma once

#include <cstdint>

#include "backend/cpu/vec_dot.h"
#include "core/dtype.h"
#include "core/thread_pool.h"

namespace pagoda::cpu {

// x: [n, k] f32; w: m rows of k elements of w_type; out: [n, m] f32 (must not alias x).
void matmul(ThreadPool& pool, const VecDotKernels& kernels, const float* x, int64_t n, int64_t k,
            const void* w, DType w_type, int64_t m, float* out);

}  // namespace pagoda::cpu
