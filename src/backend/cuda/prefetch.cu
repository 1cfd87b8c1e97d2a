// A weight pulled into L2 ahead of the kernel that reads it. In a decode step the qkv GEMV
// is followed by the rope and the attention, which read a few MB of KV cache in ~15 us and
// leave the memory bus mostly idle; the o projection after them is a short GEMV whose fixed
// cost (ramp and tail, ~8 us) is as large as its streaming time. Asked for at the qkv
// GEMV's end, its weight streams into L2 while the attention runs, and the GEMV reads it
// from there. One thread issues one bulk prefetch (Hopper's cp.async.bulk.prefetch, which
// the TMA unit carries out: nothing waits for it); below sm_90 the kernel does nothing.
// Over a long context the attention itself keeps the bus busy and would push the weight out
// of L2 again: the kernel skips the prefetch when the sequences' lengths, read on the device
// (a decode graph serves every length), add up to more than max_context.
#include <algorithm>
#include <cstdint>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pdl.h"
#include "core/error.h"

namespace pagoda::cuda {

namespace {

constexpr int64_t kPiece = 32 * 1024;  // bytes one thread asks for
constexpr int kThreads = 256;

// seq_lens is read before pdl_wait: the host copied it in before the step, and no kernel
// writes it.
__global__ void prefetch_l2_kernel(const char* p, int64_t bytes, const int32_t* seq_lens, int num_seqs,
                                   int64_t max_context) {
  pdl_launch_dependents();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  int64_t context = 0;
  for (int s = 0; s < num_seqs; ++s) context += seq_lens[s];
  const int64_t begin = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) * kPiece;
  if (context <= max_context && begin < bytes) {
    const auto size = static_cast<uint32_t>(min(kPiece, bytes - begin));  // a multiple of 16
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p + begin), "r"(size) : "memory");
  }
#endif
  // The kernel after this one waits for this one only: this one waits for the one before.
  pdl_wait();
}

}  // namespace

void prefetch_l2(const void* p, int64_t bytes, const int32_t* seq_lens, int num_seqs, int64_t max_context,
                 cudaStream_t stream) {
  bytes = bytes / 16 * 16;
  if (bytes <= 0 || reinterpret_cast<uintptr_t>(p) % 16 != 0) return;  // a hint: nothing to fail
  const int64_t pieces = (bytes + kPiece - 1) / kPiece;
  const auto blocks = static_cast<unsigned>((pieces + kThreads - 1) / kThreads);
  launch_pdl(prefetch_l2_kernel, dim3(blocks), dim3(kThreads), 0, stream, "prefetch_l2", static_cast<const char*>(p),
             bytes, seq_lens, num_seqs, max_context);
  check_launch("prefetch_l2");
}

}  // namespace pagoda::cuda
