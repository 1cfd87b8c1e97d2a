// The tensor-core building blocks the attention kernels share: mma.sync m16n8k16 with BF16
// inputs and F32 accumulators, and ldmatrix to load its fragments from shared memory.
//
// Fragment layouts (PTX m16n8k16): lane = 4 * g + q. Accumulator c[0..1] is row g, columns
// 2q and 2q + 1; c[2..3] row g + 8. A register 0 is row g, columns 2q, 2q + 1; 1 is row g + 8;
// 2 and 3 the same at columns + 8. B registers 0 and 1: rows (k) 2q.. and 2q + 8.., column g.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace pagoda::cuda {

__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t address, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t address, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
// Two transposed 8 x 8 matrices, their rows' addresses given by lanes 0-7 and 8-15.
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t address, uint32_t& r0, uint32_t& r1) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r0), "=r"(r1)
               : "r"(address));
}

// c += a (16 x 16, row-major) . b (16 x 8, column-major).
__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats as a BF16 pair, lo in the low half (the lower column of a fragment).
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

}  // namespace pagoda::cuda
