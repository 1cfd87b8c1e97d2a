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

// What ops allocate while a graph records comes from the backend's capture arena
// (capture_arena.h): no memory nodes in the graph, freed ranges reused within a recording,
// and every graph drawing from the same memory, since graphs run one at a time. A graph's
// outputs hold until the next replay of any graph, and the pool's eager allocations never
// land in the arena.
TEST(CudaGraphMemory, GraphsShareTheirTemporariesAndKeepEachOutputUntilTheNextReplay) {
  PAGODA_NEED_GPU();
  const std::unique_ptr<Backend> gpu = make_backend("cuda");
  if (!gpu->can_capture()) GTEST_SKIP() << "graphs are off (PAGODA_CUDA_GRAPHS=0)";
  std::mt19937 rng(11);
  const int64_t m = 256, k = 1024;
  const Tensor w1 = random_bf16_weight(*gpu, rng, m, k), w2 = random_bf16_weight(*gpu, rng, m, m);
  const Tensor w3 = random_bf16_weight(*gpu, rng, m, k), w4 = random_bf16_weight(*gpu, rng, m, m);
  const Tensor x = on(*gpu, bf16_values(rng, size_t(k)), {1, k});
  // x -> t = x w^T -> out = t v^T -> (t freed) u = out v^T, the output: the temporary's range
  // is free again for u while out is still live.
  const auto chain = [&](const Tensor& w, const Tensor& v) {
    Tensor out = gpu->scratch(DType::F32, {1, m});
    {
      Tensor t = gpu->scratch(DType::F32, {1, m});
      gpu->matmul(x, w, t);
      gpu->matmul(t, v, out);
    }
    Tensor u = gpu->scratch(DType::F32, {1, m});
    gpu->matmul(out, v, u);
    return u;
  };
  const std::vector<float> expected_a = back(*gpu, chain(w1, w2)), expected_b = back(*gpu, chain(w3, w4));

  gpu->begin_capture({});
  const Tensor out_a = chain(w1, w2);
  const int graph_a = gpu->end_capture();
  gpu->begin_capture({});
  const Tensor out_b = chain(w3, w4);
  const int graph_b = gpu->end_capture();
  const std::vector<float> pattern = random_values(rng, size_t(m));
  std::vector<Tensor> eager;
  for (int i = 0; i < 16; ++i) eager.push_back(on(*gpu, pattern, {m}));

  for (int round = 0; round < 2; ++round) {
    gpu->replay(graph_a);
    EXPECT_EQ(back(*gpu, out_a), expected_a) << "round " << round;
    gpu->replay(graph_b);
    EXPECT_EQ(back(*gpu, out_b), expected_b) << "round " << round;
  }
  for (size_t i = 0; i < eager.size(); ++i) {
    EXPECT_EQ(back(*gpu, eager[i]), pattern) << "allocation " << i << " was written by a replay";
  }
  gpu->release_graph(graph_a);
  gpu->release_graph(graph_b);
}

}  // namespace
}  // namespace pagoda
