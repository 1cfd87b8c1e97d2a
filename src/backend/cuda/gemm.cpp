#include "backend/cuda/gemm.h"

#include "backend/cuda/cuda_check.h"

namespace pagoda::cuda {

namespace {

// The batch size whose best algorithm every batch size uses in batch-invariant mode.
constexpr int64_t kInvariantN = 128;

cublasLtMatrixLayout_t layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t l = nullptr;
  check(cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
        "cublasLtMatrixLayoutCreate");
  return l;
}

}  // namespace

LtGemm::LtGemm(cudaStream_t stream, bool batch_invariant) : stream_(stream), batch_invariant_(batch_invariant) {
  check(cublasLtCreate(&handle_), "cublasLtCreate");
  check(cudaMalloc(&workspace_, workspace_bytes_), "cudaMalloc (cuBLASLt workspace)");
}

LtGemm::~LtGemm() {
  for (auto& [shape, p] : plans_) {
    cublasLtMatrixLayoutDestroy(p.a);
    cublasLtMatrixLayoutDestroy(p.b);
    cublasLtMatrixLayoutDestroy(p.c);
    cublasLtMatmulDescDestroy(p.op);
  }
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

cublasLtMatmulAlgo_t LtGemm::pick_algo(const Plan& p, int64_t n, int64_t k, int64_t m) {
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
                                             sizeof(workspace_bytes_)),
        "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, p.op, p.a, p.b, p.c, p.c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  check(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) fail("cuBLASLt has no algorithm for a ", n, "x", k, " by ", m, "x", k, " BF16 GEMM");
  return result.algo;
}

LtGemm::Plan& LtGemm::plan(int64_t n, int64_t k, int64_t m) {
  const auto key = std::make_tuple(n, k, m);
  const auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  // Column-major view: D (m x n) = W^T' (m x k) * X' (k x n), where the row-major [m, k]
  // weight is a k x m column-major matrix used transposed, and the row-major [n, k]
  // activations a k x n column-major one.
  Plan p;
  check(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)),
        "cublasLtMatmulDescSetAttribute");
  check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)),
        "cublasLtMatmulDescSetAttribute");
  p.a = layout(CUDA_R_16BF, k, m, k);
  p.b = layout(CUDA_R_16BF, k, n, k);
  p.c = layout(CUDA_R_32F, m, n, m);
  if (!batch_invariant_) {
    p.algo = pick_algo(p, n, k, m);
  } else {
    const auto inv = invariant_algos_.find({k, m});
    if (inv != invariant_algos_.end()) {
      p.algo = inv->second;
    } else {
      Plan probe;
      probe.op = p.op;
      probe.a = p.a;
      probe.c = layout(CUDA_R_32F, m, kInvariantN, m);
      probe.b = layout(CUDA_R_16BF, k, kInvariantN, k);
      p.algo = pick_algo(probe, kInvariantN, k, m);
      cublasLtMatrixLayoutDestroy(probe.b);
      cublasLtMatrixLayoutDestroy(probe.c);
      const int32_t one = 1;  // no split-K: each output is one dot product in a fixed order
      check(cublasLtMatmulAlgoConfigSetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &one, sizeof(one)),
            "cublasLtMatmulAlgoConfigSetAttribute");
      invariant_algos_.emplace(std::make_pair(k, m), p.algo);
    }
  }
  return plans_.emplace(key, p).first->second;
}

void LtGemm::run(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out,
                 bool accumulate) {
  if (n <= 0 || m <= 0) return;
  Plan& p = plan(n, k, m);
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check(cublasLtMatmul(handle_, p.op, &alpha, w, p.a, x, p.b, &beta, out, p.c, out, p.c, &p.algo, workspace_,
                       workspace_bytes_, stream_),
        "cublasLtMatmul");
}

}  // namespace pagoda::cuda
