// Sampling on the GPU: one block per row, so that only the chosen ids cross to the host.
//
// The survivors are those of the host Sampler (sample/filters.cpp): logits divided by the
// temperature in float, min_p on exp(l - l_max), top_k keeping every logit >= the k-th
// largest, top_p keeping every token whose strictly-larger mass is below top_p of the
// total (ties with the last survivor survive). The host sorts to find the cut-offs; here
// each cut-off is found by a bitwise search over the 32-bit order of the float values,
// one pass over the row per bit, and the set {x >= cut-off} is the same set. Masses are
// summed in double, like the host, though in another order: a token whose cumulative mass
// sits within double rounding of a boundary may differ.
//
// The draw is an inverse-CDF walk over the survivors in token-id order (the host walks its
// sorted order when top_k or top_p cut): the same distribution, and for a given uniform
// the same token as a host walk in id order.
//
// A row without a top_k or top_p cut-off (plain temperature and min_p: what most requests
// ask for) needs no search, and one block walking a 128k vocabulary takes ~80 us on the
// H200: such rows are split over kParts blocks. One kernel finds each part's largest logit,
// one each part's surviving mass (every block first combines the parts' maxima), and one
// block per row adds the part masses in order, picks the part where uniform * total falls
// and walks it as the one-block kernel walks a row.
#include <cfloat>
#include <type_traits>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pdl.h"

namespace pagoda::cuda {

namespace {

constexpr int kThreads = kReduceThreads;
constexpr int kWarps = kReduceWarps;

struct Shared {
  double d[kWarps];
  float f[kWarps];
  int i[kWarps];
  double prefix[kThreads];
};

// The row as the filters see it: x = logit / temperature and the cut-offs found so far.
struct Row {
  const float* logits;
  int64_t vocab;
  float temperature;  // x = logit / temperature, as the host divides
  float max_x;
  float min_p;
  uint32_t min_key;  // survivors have order_key(x) >= min_key (top_k, top_p)

  __device__ float x(int64_t i) const { return logits[i] / temperature; }
  // Finite, past min_p and at or above the cut-off key.
  __device__ bool survives(float xi) const {
    if (!(xi > -INFINITY)) return false;
    if (min_p > 0.0f && !(static_cast<float>(exp(static_cast<double>(xi - max_x))) >= min_p)) return false;
    return order_key(xi) >= min_key;
  }
  // The host's float std::exp, which glibc rounds correctly in practice: a double exp
  // rounded to float gives the same float (CUDA's expf is 2 ulp off, and over a 128k
  // vocabulary those errors move the CDF by more than a rare token's width).
  __device__ double weight(float xi) const { return static_cast<double>(static_cast<float>(exp(static_cast<double>(xi - max_x)))); }
};

// Largest key K with sum(measure(x) over survivors with key >= K) >= threshold, one pass
// over the row per bit. With measure = 1 and threshold k it is the k-th largest value's key
// (top_k). With measure = weight and threshold top_p * mass it is top_p's cut-off: below
// it, a token's strictly larger mass already reaches the target, so the survivors are
// exactly key >= K.
template <class T, class Measure>
__device__ uint32_t largest_key_reaching(const Row& row, Measure measure, T threshold, T* scratch) {
  uint32_t result = 0;
  for (int bit = 31; bit >= 0; --bit) {
    const uint32_t candidate = result | (1u << bit);
    T sum = 0;
    for (int64_t i = threadIdx.x; i < row.vocab; i += kThreads) {
      const float xi = row.x(i);
      if (row.survives(xi) && order_key(xi) >= candidate) sum += measure(xi);
    }
    if (block_reduce(sum, scratch, Sum{}) >= threshold) result = candidate;
  }
  return result;
}

// The token of [begin, end) where an inverse-CDF walk in id order crosses uniform times the
// range's surviving mass (the range's last survivor when rounding leaves the walk short; -1
// when none survives). Each thread owns a contiguous chunk of ids, so an exclusive scan of
// the chunk masses finds the chunk where the walk crosses. Every thread gets the result.
__device__ int draw_in(const Row& row, int64_t begin_all, int64_t end_all, double uniform, Shared* sh) {
  const int64_t chunk = (end_all - begin_all + kThreads - 1) / kThreads;
  const int64_t begin = begin_all + threadIdx.x * chunk;
  const int64_t end = begin + chunk < end_all ? begin + chunk : end_all;
  double mass = 0.0;
  int last_survivor = -1;
  for (int64_t i = begin; i < end; ++i) {
    const float xi = row.x(i);
    if (row.survives(xi)) mass += row.weight(xi), last_survivor = static_cast<int>(i);
  }
  sh->prefix[threadIdx.x] = mass;
  __syncthreads();
  for (int stride = 1; stride < kThreads; stride *= 2) {  // Hillis-Steele inclusive scan
    const double add = threadIdx.x >= stride ? sh->prefix[threadIdx.x - stride] : 0.0;
    __syncthreads();
    sh->prefix[threadIdx.x] += add;
    __syncthreads();
  }
  const double total = sh->prefix[kThreads - 1];
  const double target = uniform * total;
  const double before = threadIdx.x == 0 ? 0.0 : sh->prefix[threadIdx.x - 1];
  int chosen = INT_MAX;
  if (mass > 0.0 && target >= before && target < before + mass) {
    double cumulative = before;
    for (int64_t i = begin; i < end && chosen == INT_MAX; ++i) {
      const float xi = row.x(i);
      if (!row.survives(xi)) continue;
      cumulative += row.weight(xi);
      if (target < cumulative) chosen = static_cast<int>(i);
    }
    if (chosen == INT_MAX) chosen = last_survivor;  // rounding between the scan and the walk
  }
  chosen = block_reduce(chosen, sh->i, MinInt{});
  last_survivor = block_reduce(last_survivor, sh->i, MaxInt{});
  return chosen != INT_MAX ? chosen : last_survivor;
}

__device__ bool is_split(const SampleRowArgs& row) {
  return row.greedy != 0 || (row.top_k <= 0 && !(row.top_p < 1.0f));
}

__global__ void sample_kernel(const float* logits, int64_t vocab, const SampleRowArgs* rows, int32_t* ids) {
  pdl_launch_dependents();
  pdl_wait();
  __shared__ Shared sh;
  const SampleRowArgs args = rows[blockIdx.x];
  if (is_split(args)) return;  // the split kernels take it (greedy rows among them)
  const float* row_logits = logits + static_cast<int64_t>(args.logit_row) * vocab;

  // Pass 1: the largest logit (lowest id on ties) and whether any is NaN or +inf.
  float best = -INFINITY;
  int best_id = INT_MAX;
  int anomaly = 0;
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
    const float l = row_logits[i];
    if (isnan(l) || l == INFINITY) anomaly = 1;
    if (l > best) best = l, best_id = static_cast<int>(i);
  }
  const float max_logit = block_reduce(best, sh.f, Max{});
  if (best != max_logit) best_id = INT_MAX;
  best_id = block_reduce(best_id, sh.i, MinInt{});
  anomaly = block_reduce(anomaly, sh.i, MaxInt{});
  if (anomaly != 0 || !(max_logit > -INFINITY)) {
    if (threadIdx.x == 0) ids[blockIdx.x] = -1;  // the host sampler decides (or reports)
    return;
  }

  // Dividing by a positive temperature keeps the order, so the largest x is that logit's.
  Row row{row_logits, vocab, args.temperature, row_logits[best_id] / args.temperature, args.min_p, 0};
  if (args.top_k > 0) {
    int count = 0;
    for (int64_t i = threadIdx.x; i < vocab; i += kThreads) count += row.survives(row.x(i));
    if (args.top_k < block_reduce(count, sh.i, Sum{})) {
      row.min_key = largest_key_reaching(row, [](float) { return 1; }, static_cast<int>(args.top_k), sh.i);
    }
  }
  if (args.top_p < 1.0f) {
    double total = 0.0;
    for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
      const float xi = row.x(i);
      if (row.survives(xi)) total += row.weight(xi);
    }
    const double target = static_cast<double>(args.top_p) * block_reduce(total, sh.d, Sum{});
    row.min_key = largest_key_reaching(row, [&row](float xi) { return row.weight(xi); }, target, sh.d);
  }

  const int chosen = draw_in(row, 0, vocab, args.uniform, &sh);
  if (threadIdx.x == 0) ids[blockIdx.x] = chosen;
}

// Split rows (kParts blocks each). A part is a contiguous range of the vocabulary.
constexpr int kParts = 64;
constexpr int kPartThreads = 256;

struct PartMax {
  float max_logit;  // -inf: none finite
  int best_id;      // lowest id of max_logit in the part (INT_MAX: none)
  int anomaly;      // a NaN or +inf logit in the part
};

__device__ void part_range(int64_t vocab, int part, int64_t& begin, int64_t& end) {
  const int64_t len = (vocab + kParts - 1) / kParts;
  begin = part * len < vocab ? part * len : vocab;
  end = begin + len < vocab ? begin + len : vocab;
}

// A kPartThreads-block reduction: every thread gets the result.
template <class T, class Op>
__device__ T part_reduce(T v, T* scratch, Op op) {
  constexpr int kPartWarps = kPartThreads / 32;
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < kPartWarps; ++w) v = op(v, scratch[w]);
  __syncthreads();
  return v;
}

// The row's largest logit, its lowest id and whether any logit is NaN or +inf, from the
// parts' (threads < kParts hold one part each; every thread gets the result).
template <class Reduce>
__device__ PartMax combine_parts(const PartMax* row_parts, Reduce reduce) {
  PartMax p{-INFINITY, INT_MAX, 0};
  if (threadIdx.x < kParts) p = row_parts[threadIdx.x];
  PartMax row;
  row.max_logit = reduce(p.max_logit, Max{});
  row.best_id = reduce(p.max_logit == row.max_logit ? p.best_id : INT_MAX, MinInt{});
  row.anomaly = reduce(p.anomaly, MaxInt{});
  return row;
}

__global__ void split_max_kernel(const float* logits, int64_t vocab, const SampleRowArgs* rows, PartMax* maxima) {
  pdl_launch_dependents();
  pdl_wait();
  __shared__ float sf[kPartThreads / 32];
  __shared__ int si[kPartThreads / 32];
  const SampleRowArgs args = rows[blockIdx.y];
  if (!is_split(args)) return;
  const float* row = logits + static_cast<int64_t>(args.logit_row) * vocab;
  int64_t begin = 0, end = 0;
  part_range(vocab, static_cast<int>(blockIdx.x), begin, end);
  float best = -INFINITY;
  int best_id = INT_MAX, anomaly = 0;
  for (int64_t i = begin + threadIdx.x; i < end; i += kPartThreads) {
    const float l = row[i];
    if (isnan(l) || l == INFINITY) anomaly = 1;
    if (l > best) best = l, best_id = static_cast<int>(i);
  }
  const float max_logit = part_reduce(best, sf, Max{});
  best_id = part_reduce(best == max_logit ? best_id : INT_MAX, si, MinInt{});
  anomaly = part_reduce(anomaly, si, MaxInt{});
  if (threadIdx.x == 0) maxima[blockIdx.y * kParts + blockIdx.x] = PartMax{max_logit, best_id, anomaly};
}

__global__ void split_mass_kernel(const float* logits, int64_t vocab, const SampleRowArgs* rows, const PartMax* maxima,
                                  double* masses) {
  pdl_launch_dependents();
  pdl_wait();
  __shared__ float sf[kPartThreads / 32];
  __shared__ int si[kPartThreads / 32];
  __shared__ double sd[kPartThreads / 32];
  const SampleRowArgs args = rows[blockIdx.y];
  if (!is_split(args) || args.greedy != 0) return;
  const auto reduce = [&](auto v, auto op) {
    if constexpr (std::is_same_v<decltype(v), float>) return part_reduce(v, sf, op);
    else return part_reduce(v, si, op);
  };
  const PartMax whole = combine_parts(maxima + blockIdx.y * kParts, reduce);
  if (whole.anomaly != 0 || !(whole.max_logit > -INFINITY)) return;  // split_draw_kernel hands it back
  const float* row_logits = logits + static_cast<int64_t>(args.logit_row) * vocab;
  const Row row{row_logits, vocab, args.temperature, whole.max_logit / args.temperature, args.min_p, 0};
  int64_t begin = 0, end = 0;
  part_range(vocab, static_cast<int>(blockIdx.x), begin, end);
  double mass = 0.0;
  for (int64_t i = begin + threadIdx.x; i < end; i += kPartThreads) {
    const float xi = row.x(i);
    if (row.survives(xi)) mass += row.weight(xi);
  }
  mass = part_reduce(mass, sd, Sum{});
  if (threadIdx.x == 0) masses[blockIdx.y * kParts + blockIdx.x] = mass;
}

__global__ void split_draw_kernel(const float* logits, int64_t vocab, const SampleRowArgs* rows,
                                  const PartMax* maxima, const double* masses, int32_t* ids) {
  pdl_launch_dependents();
  pdl_wait();
  __shared__ Shared sh;
  __shared__ int picked_part;
  __shared__ double part_uniform;
  const SampleRowArgs args = rows[blockIdx.x];
  if (!is_split(args)) return;
  const auto reduce = [&](auto v, auto op) {
    if constexpr (std::is_same_v<decltype(v), float>) return block_reduce(v, sh.f, op);
    else return block_reduce(v, sh.i, op);
  };
  const PartMax whole = combine_parts(maxima + blockIdx.x * kParts, reduce);
  if (whole.anomaly != 0 || !(whole.max_logit > -INFINITY)) {
    if (threadIdx.x == 0) ids[blockIdx.x] = -1;  // the host sampler decides (or reports)
    return;
  }
  if (args.greedy != 0) {
    if (threadIdx.x == 0) ids[blockIdx.x] = whole.best_id;
    return;
  }
  // The parts' masses added in order; the part where uniform * total falls (the last with
  // mass when rounding leaves the target past the end), and where in it.
  if (threadIdx.x == 0) {
    const double* row_masses = masses + blockIdx.x * kParts;
    double total = 0.0;
    for (int p = 0; p < kParts; ++p) total += row_masses[p];
    const double target = args.uniform * total;
    double before = 0.0;
    int part = -1, last = 0;
    double part_before = 0.0;
    for (int p = 0; p < kParts; ++p) {
      const double m = row_masses[p];
      if (m > 0.0) {
        last = p;
        if (part < 0 && target < before + m) part = p, part_before = before;
      }
      before += m;
    }
    if (part < 0) part = last, part_before = before - row_masses[last];
    picked_part = part;
    const double u = (target - part_before) / row_masses[part];
    part_uniform = u < 0.0 ? 0.0 : u;
  }
  __syncthreads();
  const float* row_logits = logits + static_cast<int64_t>(args.logit_row) * vocab;
  const Row row{row_logits, vocab, args.temperature, whole.max_logit / args.temperature, args.min_p, 0};
  int64_t begin = 0, end = 0;
  part_range(vocab, picked_part, begin, end);
  const int chosen = draw_in(row, begin, end, part_uniform, &sh);
  if (threadIdx.x == 0) ids[blockIdx.x] = chosen;
}

// apply_logit_edits's arithmetic (sample/logit_edits.cpp), with every step rounded on its
// own: the _rn intrinsics are never contracted into a fused multiply-add.
__device__ float edited_logit(float l, const LogitEdit& e, const RowPenalties& p) {
  if (e.masked != 0) l = -INFINITY;
  if (e.has_bias != 0) l = __fadd_rn(l, e.bias);
  if (e.repeated != 0) l = l > 0.0f ? __fdiv_rn(l, p.repetition) : __fmul_rn(l, p.repetition);
  if (e.output_count > 0) {
    l = __fsub_rn(l, __fmul_rn(p.frequency, static_cast<float>(e.output_count)));
    l = __fsub_rn(l, p.presence);
  }
  return l;
}

// One block per row; a row's edits name distinct tokens, so no two threads write one logit.
__global__ void edit_logits_kernel(float* logits, int64_t vocab, const SampleRowArgs* rows, const LogitEdit* edits) {
  const SampleRowArgs args = rows[blockIdx.x];
  float* row = logits + static_cast<int64_t>(args.logit_row) * vocab;
  for (int i = args.edits_begin + static_cast<int>(threadIdx.x); i < args.edits_end; i += blockDim.x) {
    const LogitEdit e = edits[i];
    row[e.token] = edited_logit(row[e.token], e, args.penalties);
  }
}

}  // namespace

void edit_logits(float* logits, int64_t vocab, const SampleRowArgs* rows, int num_rows, const LogitEdit* edits,
                 cudaStream_t stream) {
  if (num_rows <= 0) return;
  edit_logits_kernel<<<static_cast<unsigned>(num_rows), 256, 0, stream>>>(logits, vocab, rows, edits);
  check_launch("edit_logits");
}

size_t sample_parts_bytes(int num_rows) {
  return static_cast<size_t>(num_rows) * kParts * (sizeof(PartMax) + sizeof(double));
}

void sample(const float* logits, int64_t vocab, const SampleRowArgs* rows, int num_rows, bool any_cut_offs,
            void* parts, int32_t* ids, cudaStream_t stream) {
  if (num_rows <= 0) return;
  auto* maxima = static_cast<PartMax*>(parts);
  auto* masses = reinterpret_cast<double*>(maxima + static_cast<size_t>(num_rows) * kParts);
  const dim3 split_grid(kParts, static_cast<unsigned>(num_rows));
  // Launched with programmatic dependent launch (pdl.h): each kernel's launch and ramp
  // overlap the tail of the one before; every kernel waits before it reads anything.
  launch_pdl(split_max_kernel, split_grid, dim3(kPartThreads), 0, stream, "sample (split_max)", logits, vocab, rows,
             maxima);
  launch_pdl(split_mass_kernel, split_grid, dim3(kPartThreads), 0, stream, "sample (split_mass)", logits, vocab, rows,
             static_cast<const PartMax*>(maxima), masses);
  launch_pdl(split_draw_kernel, dim3(static_cast<unsigned>(num_rows)), dim3(kThreads), 0, stream,
             "sample (split_draw)", logits, vocab, rows, static_cast<const PartMax*>(maxima),
             static_cast<const double*>(masses), ids);
  if (any_cut_offs) {
    launch_pdl(sample_kernel, dim3(static_cast<unsigned>(num_rows)), dim3(kThreads), 0, stream, "sample", logits,
               vocab, rows, ids);
  }
}

}  // namespace pagoda::cuda
