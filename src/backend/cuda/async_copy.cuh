// Global -> shared copies that do not hold registers while in flight (cp.async, sm_80+): the
// attention kernels stage the next tile of keys and values with them while computing the
// current one.
#pragma once

#include <cstdint>

namespace pagoda::cuda {

// 16 bytes global -> shared (dst a shared-memory address), asynchronously; zeros when !valid
// (nothing is read then).
__device__ __forceinline__ void copy16_async(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }
// Until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

}  // namespace pagoda::cuda
