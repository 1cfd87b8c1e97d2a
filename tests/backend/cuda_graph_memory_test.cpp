// Memory a captured graph writes must stay its own for as long as the graph can be replayed.
// The backend's grow-only BF16 activation buffer is recorded by every decode graph; when a
// longer prefill later grew it, the old buffer went back to the memory pool, the next
// allocations (a prefill's block tables) were handed that memory, and each decode replay
// wrote over them: on the H200 a 1,024-token prefill after a one-token decode read garbage
// block ids and faulted (compute-sanitizer: prefill_attention_kernel, 4 GB out of bounds).
// Skipped where no GPU is visible (CI); run on the device machine.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backend/backend.h"
#include "cuda_test_util.h"

namespace pagoda {
namespace {

using namespace test;

TEST(CudaGraphMemory, ABufferAGraphRecordedIsNotHandedOutWhenItGrows) {
  PAGODA_NEED_GPU();
  const std::unique_ptr<Backend> gpu = make_backend("cuda");  // fresh: its buffers start empty
  if (!gpu->can_capture()) GTEST_SKIP() << "graphs are off (PAGODA_CUDA_GRAPHS=0)";
  std::mt19937 rng(9);
  const int64_t m = 256, k = 4096;
  const Tensor wg = random_bf16_weight(*gpu, rng, m, k);

  // A one-row matmul (the decode GEMV) run once eagerly, as DecodeGraphs does before it
  // records, then recorded: the graph converts x into the BF16 buffer as it is now (1 x k).
  const Tensor x = on(*gpu, bf16_values(rng, size_t(k)), {1, k});
  Tensor out = gpu->alloc(DType::F32, {1, m});
  gpu->matmul(x, wg, out);
  const std::vector<float> expected = back(*gpu, out);
  gpu->begin_capture({});
  gpu->matmul(x, wg, out);
  const int graph = gpu->end_capture();

  // A 64-row matmul (a prefill) grows the buffer; then memory of the old buffer's size is
  // asked for and filled (the pool hands back what was freed last, on the same stream).
  const Tensor big = on(*gpu, bf16_values(rng, size_t(64 * k)), {64, k});
  Tensor big_out = gpu->alloc(DType::F32, {64, m});
  gpu->matmul(big, wg, big_out);
  const std::vector<float> pattern = random_values(rng, size_t(k / 2));  // k BF16s' bytes
  std::vector<Tensor> others;
  for (int i = 0; i < 16; ++i) others.push_back(on(*gpu, pattern, {k / 2}));

  gpu->replay(graph);
  EXPECT_EQ(back(*gpu, out), expected);
  for (size_t i = 0; i < others.size(); ++i) {
    EXPECT_EQ(back(*gpu, others[i]), pattern) << "allocation " << i << " was written by the graph's replay";
  }
  gpu->release_graph(graph);
}

// The buffer's first allocation may happen while a graph is being recorded (nothing ran
// eagerly before). A pool allocation made then would be the graph's own memory, not mapped
// until the graph runs and freed at each relaunch; the ops that run eagerly afterwards must
// still have a buffer of their own.
TEST(CudaGraphMemory, ABufferFirstMadeWhileRecordingServesEagerOpsToo) {
  PAGODA_NEED_GPU();
  const std::unique_ptr<Backend> gpu = make_backend("cuda");
  if (!gpu->can_capture()) GTEST_SKIP() << "graphs are off (PAGODA_CUDA_GRAPHS=0)";
  std::mt19937 rng(10);
  const int64_t m = 128, k = 1024;
  const Tensor wg = random_bf16_weight(*gpu, rng, m, k);
  const Tensor x = on(*gpu, bf16_values(rng, size_t(2 * k)), {2, k});
  Tensor recorded = gpu->alloc(DType::F32, {2, m}), eager = gpu->alloc(DType::F32, {2, m});
  gpu->begin_capture({});
  gpu->matmul(x, wg, recorded);
  const int graph = gpu->end_capture();
  gpu->matmul(x, wg, eager);  // before the graph has ever run
  gpu->replay(graph);
  gpu->matmul(x, wg, eager);  // and after
  EXPECT_EQ(back(*gpu, eager), back(*gpu, recorded));
  gpu->release_graph(graph);
}

}  // namespace
}  // namespace pagoda
