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

constexpr int kThreads = 32;
constexpr int kBlocksPerSm = 4;

// Each thread asks for one slice of the weight. The slices are spread over kBlocksPerSm
// blocks a multiprocessor: each multiprocessor's copy unit carries out its own blocks'
// prefetches, and the first version (one 32 KB piece a thread, four blocks for 30 MB) left
// four of them with everything, ~60 us a layer on an H100.
// seq_lens is read before pdl_wait: the host copied it in before the step, and no kernel
// writes it.
__global__ void prefetch_l2_kernel(const char* p, int64_t bytes, int64_t slice, const int32_t* seq_lens,
                                   int num_seqs, int64_t max_context) {
  pdl_launch_dependents();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  int64_t context = 0;
  for (int s = 0; s < num_seqs; ++s) context += seq_lens[s];
  const int64_t begin = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) * slice;
  if (context <= max_context && begin < bytes) {
    const auto size = static_cast<uint32_t>(min(slice, bytes - begin));  // a multiple of 16
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p + begin), "r"(size) : "memory");
  }
#endif
  // The kernel after this one waits for this one only: this one waits for the one before.
  pdl_wait();
}

}  // namespace

void prefetch_l2(const void* p, int64_t bytes, const int32_t* seq_lens, int num_seqs, int64_t max_context,
                 int num_sms, cudaStream_t stream) {
  bytes = bytes / 16 * 16;
  if (bytes <= 0 || reinterpret_cast<uintptr_t>(p) % 16 != 0) return;  // a hint: nothing to fail
  const int64_t threads = int64_t{std::max(num_sms, 1)} * kBlocksPerSm * kThreads;
  const int64_t slice = std::max<int64_t>(16, (bytes / threads + 15) / 16 * 16);
  const int64_t blocks = ((bytes + slice - 1) / slice + kThreads - 1) / kThreads;
  launch_pdl(prefetch_l2_kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), 0, stream, "prefetch_l2",
             static_cast<const char*>(p), bytes, slice, seq_lens, num_seqs, max_context);
  check_launch("prefetch_l2");
}

}  // namespace pagoda::cuda
