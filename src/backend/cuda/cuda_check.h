// CUDA and cuBLAS status codes turned into pagoda Errors that name the failing call.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "core/error.h"

namespace pagoda::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) fail("CUDA: ", what, ": ", cudaGetErrorString(status));
}

inline void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) fail("cuBLASLt: ", what, ": ", cublasLtGetStatusString(status));
}

// After a kernel launch: reports a bad launch configuration at once (a fault inside the
// kernel surfaces at the next synchronizing call).
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

}  // namespace pagoda::cuda
