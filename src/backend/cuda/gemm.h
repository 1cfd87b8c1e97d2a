// GEMMs through cuBLASLt: out[n, m] (F32) = x[n, k] (BF16) · w[m, k]^T (BF16), F32
// accumulation. A plan (descriptors + algorithm) is made once per shape and reused.
//
// Batch invariance: cuBLASLt's heuristic picks a different kernel (tile, split-K) for each
// n, so a row's result depends on how many rows share the call. With batch_invariant set
// (env PAGODA_BATCH_INVARIANT=1, as vLLM's VLLM_BATCH_INVARIANT) every n of a weight shape
// uses one algorithm without split-K, so each row is computed the same way at any batch
// size; it costs decode speed (that algorithm's tiles are sized for larger n).
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <map>
#include <tuple>

namespace pagoda::cuda {

class LtGemm {
 public:
  LtGemm(cudaStream_t stream, bool batch_invariant);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // accumulate: out += the product (beta = 1) instead of out = it.
  void run(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out,
           bool accumulate = false);

 private:
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  Plan& plan(int64_t n, int64_t k, int64_t m);
  [[nodiscard]] cublasLtMatmulAlgo_t pick_algo(const Plan& p, int64_t n, int64_t k, int64_t m);

  cudaStream_t stream_;
  bool batch_invariant_;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = size_t{32} << 20;
  std::map<std::tuple<int64_t, int64_t, int64_t>, Plan> plans_;
  std::map<std::pair<int64_t, int64_t>, cublasLtMatmulAlgo_t> invariant_algos_;  // by (k, m)
};

}  // namespace pagoda::cuda
