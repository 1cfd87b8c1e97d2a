// Logprobs of rows sampled on the GPU, so that a request asking for them keeps its logits on
// the device too: one block per row computes log_softmax's shift, the sampled token's
// logprob and rank, and the top tokens, with sample/logprobs.cpp's arithmetic (the shift in
// double, each logprob rounded from double l - shift) over the logits as they were before
// the row's edits (gather_logit_rows keeps that copy).
//
// The top n are found by n passes over the row, each taking the best (logprob, lowest id)
// ordered strictly after the previous pick: n <= kMaxDeviceLogprobs and the row sits in L2
// after the first pass, so this costs tens of microseconds a row and needs no sort.
#include <climits>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"

namespace pagoda::cuda {

namespace {

constexpr int kThreads = kReduceThreads;

__global__ void gather_rows_kernel(const float* logits, int64_t vocab, const LogprobsRowArgs* rows, float* raw) {
  const float* src = logits + static_cast<int64_t>(rows[blockIdx.y].logit_row) * vocab;
  float* dst = raw + static_cast<int64_t>(blockIdx.y) * vocab;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < vocab;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

// log_softmax's value of logit l: -inf stays -inf.
__device__ float logprob_of(float l, double shift) {
  return l > -INFINITY ? static_cast<float>(static_cast<double>(l) - shift) : -INFINITY;
}

// (logprob, id) as one integer whose larger values come first in gather_logprobs' order:
// descending logprob, then ascending id.
__device__ unsigned long long rank_key(float logprob, int64_t id) {
  return (static_cast<unsigned long long>(order_key(logprob)) << 32) | (0xffffffffu - static_cast<uint32_t>(id));
}

__global__ void raw_logprobs_kernel(const float* raw, int64_t vocab, const LogprobsRowArgs* rows, int32_t* ids,
                                    DeviceLogprobs* out) {
  __shared__ float sf[kReduceWarps];
  __shared__ int si[kReduceWarps];
  __shared__ double sd[kReduceWarps];
  __shared__ unsigned long long su[kReduceWarps];
  const LogprobsRowArgs args = rows[blockIdx.x];
  const float* row = raw + static_cast<int64_t>(blockIdx.x) * vocab;
  const int32_t token = ids[args.sample_row];

  float best = -INFINITY;
  int anomaly = 0;
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
    const float l = row[i];
    if (isnan(l) || l == INFINITY) anomaly = 1;
    best = fmaxf(best, l);
  }
  const float max_logit = block_reduce(best, sf, Max{});
  anomaly = block_reduce(anomaly, si, MaxInt{});  // its barriers order every read of ids first
  // log_softmax's special cases (NaN, +inf, nothing finite) are the host's to take: the row
  // goes back whole, sampled again there from its raw logits.
  if (anomaly != 0 || !(max_logit > -INFINITY)) {
    if (threadIdx.x == 0) ids[args.sample_row] = -1;
    return;
  }
  if (token < 0) return;  // the sampler handed it back already

  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
    const float l = row[i];
    if (l > -INFINITY) sum += exp(static_cast<double>(l) - max_logit);
  }
  const double shift = static_cast<double>(max_logit) + log(block_reduce(sum, sd, Sum{}));

  const float own = logprob_of(row[token], shift);
  int count = 0;
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) count += logprob_of(row[i], shift) >= own;
  count = block_reduce(count, si, Sum{});

  const int num_top = static_cast<int>(args.num_top < vocab ? args.num_top : vocab);
  unsigned long long previous = ~0ull;  // every key is below it
  for (int n = 0; n < num_top; ++n) {
    unsigned long long pick = 0;
    for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
      const unsigned long long key = rank_key(logprob_of(row[i], shift), i);
      if (key < previous && key > pick) pick = key;
    }
    pick = block_reduce(pick, su, MaxU64{});
    previous = pick;
    if (threadIdx.x == 0) {
      const int64_t id = 0xffffffffu - static_cast<uint32_t>(pick & 0xffffffffu);
      out[blockIdx.x].top_ids[n] = static_cast<int32_t>(id);
      out[blockIdx.x].top_logprobs[n] = logprob_of(row[id], shift);
    }
  }
  if (threadIdx.x == 0) {
    out[blockIdx.x].sampled_logprob = own;
    out[blockIdx.x].sampled_rank = count > 1 ? count : 1;
    out[blockIdx.x].num_top = num_top;
  }
}

}  // namespace

void gather_logit_rows(const float* logits, int64_t vocab, const LogprobsRowArgs* rows, int num_rows, float* raw,
                       cudaStream_t stream) {
  if (num_rows == 0) return;
  const int64_t blocks = (vocab + 256 * 4 - 1) / (256 * 4);
  gather_rows_kernel<<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(num_rows)), 256, 0, stream>>>(
      logits, vocab, rows, raw);
  check_launch("gather_logit_rows");
}

void raw_logprobs(const float* raw, int64_t vocab, const LogprobsRowArgs* rows, int num_rows, int32_t* ids,
                  DeviceLogprobs* out, cudaStream_t stream) {
  if (num_rows == 0) return;
  raw_logprobs_kernel<<<static_cast<unsigned>(num_rows), kThreads, 0, stream>>>(raw, vocab, rows, ids, out);
  check_launch("raw_logprobs");
}

}  // namespace pagoda::cuda
