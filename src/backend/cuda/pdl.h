// Programmatic dependent launch (Hopper and later): a kernel launched with launch_pdl may
// start while the kernel before it on the stream is still finishing, so its launch and
// ramp-up (a few microseconds: a decode step is ~350 short kernels) overlap that kernel's
// tail, and a GEMV can start pulling its weights meanwhile.
//
// The contract for a kernel launched with launch_pdl:
//   - it calls pdl_launch_dependents() early (its own successor may then be scheduled once
//     every block of this kernel is resident);
//   - before it reads anything an earlier kernel wrote, writes any global memory, or exits,
//     every thread calls pdl_wait(), which returns once the previous kernel has completed
//     and its writes are visible. Only data no kernel writes (weights) may be read before.
// A kernel launched plainly after one of these waits for it as usual. Off below sm_90
// (the instructions compile to nothing and the launch attribute is not set) and with
// PAGODA_PDL=0.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "backend/cuda/cuda_check.h"

namespace pagoda::cuda {

__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Whether launches set the attribute: the current device is sm_90 or later and PAGODA_PDL
// is not 0 (read once).
bool pdl_enabled();

template <class... Params, class... Args>
void launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const char* what,
                Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = pdl_enabled() ? 1 : 0;
  check(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), what);
}

}  // namespace pagoda::cuda
