// Paged attention for mixed prefill + decode batches, and the KV cache write.
//
// Caches are BF16 (the CUDA backend's KV dtype: half the bytes of F32) or F32. One block
// works on one tile (up to `tile_tokens` consecutive new tokens of one sequence) and one
// group of `heads_per_block` query heads that share a KV head (GQA), with one warp per
// (token, head) row. The block walks its keys in chunks of 32: the chunk's K and V rows are
// loaded once into shared memory for every row of the block, so under GQA each K/V row is
// read from memory once per tile instead of once per query head. Within a chunk, lane l
// scores key l against its row's query, the warp takes one max and one sum per chunk
// (online softmax), and every lane accumulates its share of the head dimensions over the
// chunk's values (dim_of: from BF16 caches two adjacent ones at a time). Over BF16 caches
// the chunk's arithmetic runs on the tensor cores instead, the block's rows as the rows of
// mma tiles (attention_mma.cuh), and its chunks come in by cp.async two stages deep.
//
// Chunks sit at absolute key positions (multiples of 32), and a row skips chunks in which
// none of its keys are visible, so a row's result does not depend on which tile it shares
// or how its sequence was chunked: batch invariance holds when the context is not split.
// When the batch has too few blocks to fill the GPU (a few decodes over long contexts), the
// context is split (flash-decoding): split z of a sequence covers keys
// [z * split_keys, (z + 1) * split_keys) with split_keys a multiple of 32 derived on the
// device from that sequence's own length; each split writes its running max, denominator
// and unnormalized sum, and the split of a (tile, head group) that finishes last combines
// them in split order (a counter per pair says which is last), or, without counters, a
// second kernel does: the same arithmetic, the same bits.
// Prefill chunks go to the tensor-core prefill kernel where they can (attention_prefill.cu).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backend/cuda/async_copy.cuh"
#include "backend/cuda/attention_mma.cuh"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/head_rope.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pdl.h"
#include "core/error.h"

namespace pagoda::cuda {

namespace {

constexpr int kChunk = 32;          // keys per shared-memory chunk: one per lane
constexpr int kMaxRowsPerBlock = 8;  // warps per block

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ void store(float* p, float x) { *p = x; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }

// Two adjacent BF16 values of a shared-memory row (4-byte aligned: smem_stride), as floats.
__device__ __forceinline__ float2 load_pair(const __nv_bfloat16* p) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
}

// The head dimension of a lane's j-th accumulator: j * 32 + lane, or, read in pairs, the pair
// at 2 * lane in the j / 2-th 64 dimensions (lanes read consecutive words of a row).
template <bool kPairs>
__device__ __forceinline__ int dim_of(int j, int lane) {
  return kPairs ? (j / 2) * 64 + 2 * lane + j % 2 : j * 32 + lane;
}

template <class KvT>
__global__ void write_kv_kernel(const float* k, const float* v, KvT* k_cache, KvT* v_cache,
                                const int64_t* slot_mapping, int64_t total, int64_t row) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= total) return;
  const int64_t t = i / row, c = i % row;
  const int64_t slot = slot_mapping[t];
  if (slot < 0) return;  // a padding token
  store(k_cache + slot * row + c, k[i]);
  store(v_cache + slot * row + c, v[i]);
}

// Shared-memory row stride of a chunk's K/V rows, in elements: one 4-byte word of padding,
// so lane l reading row l at the same column hits bank (l + column) % 32, not one bank.
template <class KvT>
__host__ __device__ constexpr int smem_stride(int head_dim) {
  return head_dim + static_cast<int>(4 / sizeof(KvT));
}

// The chunk's rows on the tensor cores (attention_mma.cuh) are 16-byte aligned instead.
template <class KvT, bool kMma>
__host__ __device__ constexpr int chunk_stride(int head_dim) {
  return kMma ? mma_stride(head_dim) : smem_stride<KvT>(head_dim);
}

// kMma double-buffers the chunks (two stages of K and V rows).
template <class KvT, bool kMma>
size_t smem_bytes(int head_dim, int rows) {
  return (kMma ? 2 : 1) * 2 * size_t{kChunk} * chunk_stride<KvT, kMma>(head_dim) * sizeof(KvT) +
         size_t(rows) * head_dim * sizeof(float);
}

template <int kSlices, int kBatch>
__device__ void combine_dims(const float* partial, int num_splits, int num_tokens, int num_heads, int64_t head_dim,
                             int t, int h, int j0, float* out, __nv_bfloat16* out_bf16);

// The decode attention's inputs, in one block of attention_kernel<..., kFromQkv = true>:
// warp w's query head h from source, normed and rotated into q_row (what
// split_rope_write_kv writes to q); and when has_new, the new token's key (warp 0, through
// k_row) and value (the block's last warp), written to the caches at the token's slot as
// split_rope_write_kv writes them and, when the new key is in the block's first chunk
// (new_row < kChunk), into that chunk's shared-memory row as the chunk's staging would
// have read them back. A later chunk reads them from the cache after a __syncthreads.
template <int kPerLane, int kPairs, class KvT>
__device__ void make_inputs(const QkvSource& s, int t, int h, int64_t kvh, int warp, int lane, int new_row,
                            bool has_new, const RopeAngles<kPairs>& angles, float* q_row, float* k_row, KvT* k_s,
                            KvT* v_s, int stride, KvT* k_cache, KvT* v_cache) {
  constexpr int kHeadDim = kPerLane * 32;
  const QkvLayout& l = s.layout;
  const float* qkv_row = s.qkv + static_cast<int64_t>(t) * (l.heads + 2 * l.kv_heads) * kHeadDim;
  for (int d = lane; d < kHeadDim; d += 32) q_row[d] = qkv_row[int64_t{h} * kHeadDim + d];
  __syncwarp();
  if (s.q_norm != nullptr) norm_head_row(q_row, kHeadDim, s.q_norm, s.eps, lane);
  rotate_head_row(q_row, l, angles, lane, [&](int i, float x) { q_row[i] = x; });
  if (!has_new) return;
  const int64_t slot = s.slot_mapping[t];
  const int64_t cache_row = (slot * l.kv_heads + kvh) * kHeadDim;
  const bool in_first_chunk = new_row < kChunk;
  if (warp == 0) {
    const float* src = qkv_row + (l.heads + kvh) * kHeadDim;
    for (int d = lane; d < kHeadDim; d += 32) k_row[d] = src[d];
    __syncwarp();
    if (s.k_norm != nullptr) norm_head_row(k_row, kHeadDim, s.k_norm, s.eps, lane);
    rotate_head_row(k_row, l, angles, lane, [&](int i, float x) {
      if (slot >= 0) store(k_cache + cache_row + i, x);
      if (in_first_chunk) store(k_s + new_row * stride + i, x);
    });
  }
  if (warp == static_cast<int>(blockDim.x) / 32 - 1) {
    const float* src = qkv_row + (l.heads + l.kv_heads + kvh) * kHeadDim;
    for (int d = lane; d < kHeadDim; d += 32) {
      const float x = src[d];
      if (slot >= 0) store(v_cache + cache_row + d, x);
      if (in_first_chunk) store(v_s + new_row * stride + d, x);
    }
  }
}

// Row r of a block is (token t0 + r / heads_per_block, head y * heads_per_block + r % ...).
// partial == nullptr: one split, out is written. Otherwise split blockIdx.z writes
// partial[(z, t, h)] = {max, denom, acc[head_dim]}, and with counters the last split of the
// block's (tile, head group) to finish combines them into out.
// kFromQkv (decode batches, decode_attention): the block makes its queries, and the new key
// and value if its keys end with them, from source, instead of reading q and the cache.
// kMma (BF16 caches, mma_fits): each chunk's scores and weighted values on the tensor cores
// (attention_mma.cuh) instead of a warp's lanes.
template <int kPerLane, class KvT, bool kFromQkv, bool kMma>
__global__ void __launch_bounds__(kMaxRowsPerBlock * 32)
    attention_kernel(AttentionArgs a, PagedKv kv, int num_splits, int min_split_keys, float* partial, int* counters,
                     QkvSource source) {
  constexpr int kHeadDim = kPerLane * 32;
  constexpr int kStride = chunk_stride<KvT, kMma>(kHeadDim);
  static_assert(!kMma || std::is_same_v<KvT, __nv_bfloat16>, "the tensor cores read BF16 caches");
  // BF16 rows are read two values at a time; a lane's values are then dim_of(j, lane).
  constexpr bool kPairs = std::is_same_v<KvT, __nv_bfloat16> && kPerLane % 2 == 0;
  constexpr int kStageElems = 2 * kChunk * kStride;  // a chunk's K rows, then its V rows
  constexpr int kStages = kMma ? 2 : 1;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  KvT* k_s = reinterpret_cast<KvT*>(smem_raw);  // stage 0
  KvT* v_s = k_s + kChunk * kStride;
  float* q_s = reinterpret_cast<float*>(k_s + kStages * kStageElems);
  pdl_launch_dependents();
  // With kFromQkv, before pdl_wait the block reads only what no kernel of this step writes:
  // the arrays the host uploaded before the step (tiles, query_start_loc, seq_lens, block
  // tables, positions, frequencies) and the keys before its sequence's new tokens, which
  // earlier steps wrote (the prefix cache takes a block only once its KV is computed:
  // kv_cache_manager.h). So the first chunk's old keys and values travel while the
  // projection before it ends, not in four dependent round trips after it. The plain kernel
  // could do the same; it waits first until that is measured on a GPU (tools/device/NOTES.md).
  if constexpr (!kFromQkv) pdl_wait();
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int seq = a.tiles[2 * blockIdx.x], t0 = a.tiles[2 * blockIdx.x + 1];
  const int q_begin = a.query_start_loc[seq], q_end = a.query_start_loc[seq + 1];
  const int ntok = min(a.tile_tokens, q_end - t0);
  const int context = a.seq_lens[seq];
  const int written_before = context - (q_end - q_begin);  // keys of earlier steps
  const int pos0 = written_before + (t0 - q_begin);  // the new tokens end the context
  const int tq = warp / a.heads_per_block;
  const int h = static_cast<int>(blockIdx.y) * a.heads_per_block + warp % a.heads_per_block;
  const int64_t kvh = (static_cast<int>(blockIdx.y) * a.heads_per_block) / (a.num_heads / kv.kv_heads);
  const bool active = tq < ntok;
  const int t = t0 + tq, pos = pos0 + tq;
  const int first = a.sliding_window > 0 ? max(0, pos - a.sliding_window + 1) : 0;

  // The block's keys: from the chunk holding its first token's first visible key to its
  // last token.
  const int block_first = a.sliding_window > 0 ? max(0, pos0 - a.sliding_window + 1) : 0;
  int begin = block_first / kChunk * kChunk;
  int end = pos0 + ntok;
  if (partial != nullptr) {
    const int per_split = (context + num_splits - 1) / num_splits;
    const int split_keys = max(min_split_keys, (per_split + kChunk - 1) / kChunk * kChunk);
    begin = max(begin, static_cast<int>(blockIdx.z) * split_keys);
    end = min(end, (static_cast<int>(blockIdx.z) + 1) * split_keys);
  }

  const KvT* k_cache = static_cast<const KvT*>(kv.k_cache);
  const KvT* v_cache = static_cast<const KvT*>(kv.v_cache);
  const int32_t* blocks = a.block_tables + static_cast<int64_t>(seq) * a.max_blocks_per_seq;
  constexpr int kVec = 16 / static_cast<int>(sizeof(KvT));  // elements per 16-byte load
  constexpr int kVecsPerRow = kHeadDim / kVec;
  // Staging a chunk: the rows at keys c.. that lie below hi go into shared memory, zeros into
  // the rows past the block's keys; rows in [hi, end) are left as they are. A thread moves
  // the 16-byte pieces i0, i0 + threads, ...; the loads of kInFlight pieces are issued before
  // any is stored, so a chunk costs one trip to memory (two with the block-table reads), not
  // one a piece.
  constexpr int kPieces = kChunk * kVecsPerRow, kInFlight = 4;
  const int threads = static_cast<int>(blockDim.x);
  struct Pieces {
    uint4 k[kInFlight], v[kInFlight];
  };
  const auto load_pieces = [&](int c, int hi, int i0, Pieces& in) {
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int i = i0 + u * threads, p = c + i / kVecsPerRow;
      in.k[u] = in.v[u] = make_uint4(0, 0, 0, 0);
      if (i < kPieces && p < hi && p < end) {
        const int64_t slot = static_cast<int64_t>(blocks[p / kv.block_size]) * kv.block_size + p % kv.block_size;
        const int64_t offset = (slot * kv.kv_heads + kvh) * kHeadDim + (i % kVecsPerRow) * kVec;
        in.k[u] = *reinterpret_cast<const uint4*>(k_cache + offset);
        in.v[u] = *reinterpret_cast<const uint4*>(v_cache + offset);
      }
    }
  };
  const auto store_pieces = [&](int c, int hi, int i0, const Pieces& in) {
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int i = i0 + u * threads, r = i / kVecsPerRow, p = c + r;
      if (i >= kPieces || (p >= hi && p < end)) continue;
      // The padded stride keeps rows 4-byte aligned, not 16: store word by word.
      auto* kd = reinterpret_cast<uint32_t*>(k_s + r * kStride + (i % kVecsPerRow) * kVec);
      auto* vd = reinterpret_cast<uint32_t*>(v_s + r * kStride + (i % kVecsPerRow) * kVec);
      kd[0] = in.k[u].x, kd[1] = in.k[u].y, kd[2] = in.k[u].z, kd[3] = in.k[u].w;
      vd[0] = in.v[u].x, vd[1] = in.v[u].y, vd[2] = in.v[u].z, vd[3] = in.v[u].w;
    }
  };
  [[maybe_unused]] const auto stage_now = [&](int c, int hi) {
    for (int i0 = static_cast<int>(threadIdx.x); i0 < kPieces; i0 += kInFlight * threads) {
      Pieces in;
      load_pieces(c, hi, i0, in);
      store_pieces(c, hi, i0, in);
    }
  };
  // kMma: the same rows into stage `stage`'s 16-byte aligned rows by cp.async, which holds no
  // registers while in flight, as one commit group: chunk c + 1 travels while chunk c is
  // computed (wait_copies, then __syncthreads, before reading it).
  [[maybe_unused]] const auto stage_async = [&](int c, int hi, int stage) {
    KvT* ks = k_s + stage * kStageElems;
    KvT* vs = ks + kChunk * kStride;
    for (int i = static_cast<int>(threadIdx.x); i < kPieces; i += threads) {
      const int r = i / kVecsPerRow, p = c + r, col = (i % kVecsPerRow) * kVec;
      if (p >= hi && p < end) continue;
      const bool valid = p < end;
      int64_t offset = 0;
      if (valid) {
        const int64_t slot = static_cast<int64_t>(blocks[p / kv.block_size]) * kv.block_size + p % kv.block_size;
        offset = (slot * kv.kv_heads + kvh) * kHeadDim + col;
      }
      copy16_async(smem_address(ks + r * kStride + col), k_cache + offset, valid);
      copy16_async(smem_address(vs + r * kStride + col), v_cache + offset, valid);
    }
    commit_copies();
  };
  const auto stage = [&](int c, int hi) {
    if constexpr (kMma) {
      stage_async(c, hi, 0);
    } else {
      stage_now(c, hi);
    }
  };
  float* q_row = q_s + warp * kHeadDim;
  if constexpr (kFromQkv) {
    // One token a block (decodes), one block a KV head: every row is active, and the block
    // whose keys end at the new token (pos == end - 1) is the one to make its key and value.
    constexpr int kPairs = (kPerLane + 1) / 2;  // rotation pairs a lane
    RopeAngles<kPairs> angles{};
    if (begin < end) {
      stage(begin, written_before);
      angles = rope_angles<kPairs>(source.layout, source.positions[t], source.inv_freq, lane);
    }
    pdl_wait();
    if (begin < end) make_inputs<kPerLane>(source, t, h, kvh, warp, lane, pos - begin, end == pos + 1, angles,
                                           q_row, q_s + a.heads_per_block * kHeadDim, k_s, v_s, kStride,
                                           const_cast<KvT*>(k_cache), const_cast<KvT*>(v_cache));
  } else {
    if (active) {
      const float* src = a.q + (static_cast<int64_t>(t) * a.num_heads + h) * kHeadDim;
      for (int d = lane; d < kHeadDim; d += 32) q_row[d] = src[d];
    }
    if (begin < end) stage(begin, end);
  }

  [[maybe_unused]] float acc[kPerLane] = {};
  [[maybe_unused]] float running_max = -INFINITY, denom = 0.0f;
  // kMma: the lane's row on the tensor cores, g = lane / 4 (attention_mma.cuh), and whether it
  // sees key p (rows past the block's, or past its tile's tokens, see none).
  const int rows = static_cast<int>(blockDim.x) / 32;
  const int mma_row = lane / 4, mma_tq = mma_row / a.heads_per_block, mma_pos = pos0 + mma_tq;
  const bool mma_active = mma_row < rows && mma_tq < ntok;
  const int mma_first = a.sliding_window > 0 ? max(0, mma_pos - a.sliding_window + 1) : 0;
  const auto mma_visible = [&](int p) { return mma_active && p >= mma_first && p <= mma_pos && p < end; };
  [[maybe_unused]] MmaRows<kHeadDim> mma_rows;
  for (int c = begin, it = 0; c < end; c += kChunk, ++it) {
    if constexpr (kMma) {
      __shared__ MmaExchange exchange;
      wait_copies<0>();
      // Chunk c has landed, the q rows are made, and the stage the next chunk goes to was
      // consumed (the chunk before this one).
      __syncthreads();
      if (c + kChunk < end) stage_async(c + kChunk, end, (it + 1) % 2);
      if (it == 0) mma_rows.load_q(mma_active ? q_s + mma_row * kHeadDim : nullptr, lane);
      const KvT* ks = k_s + (it % 2) * kStageElems;
      mma_rows.chunk(ks, ks + kChunk * kStride, c, rows, warp, lane, a.scale, a.softcap, mma_visible, exchange);
      continue;
    }
    __syncthreads();  // the previous chunk is consumed (the first time: q rows and chunk staged)
    if (c != begin) {
      stage(c, end);
      __syncthreads();
    }
    if (!active) continue;

    const int p = c + lane;
    float score = -INFINITY;
    if (p >= first && p <= pos && p < end) {
      const KvT* k_row = k_s + lane * kStride;
      float dot[4] = {};  // four chains in flight; a fixed order, so the same bits every time
#pragma unroll
      for (int d = 0; d < kHeadDim; d += 4) {
        if constexpr (kPairs) {  // the same products in the same chains, half the loads
          const float2 k01 = load_pair(k_row + d), k23 = load_pair(k_row + d + 2);
          dot[0] = fmaf(q_row[d], k01.x, dot[0]);
          dot[1] = fmaf(q_row[d + 1], k01.y, dot[1]);
          dot[2] = fmaf(q_row[d + 2], k23.x, dot[2]);
          dot[3] = fmaf(q_row[d + 3], k23.y, dot[3]);
        } else {
#pragma unroll
          for (int u = 0; u < 4; ++u) dot[u] = fmaf(q_row[d + u], to_float(k_row[d + u]), dot[u]);
        }
      }
      score = ((dot[0] + dot[1]) + (dot[2] + dot[3])) * a.scale;
      if (a.softcap > 0.0f) score = a.softcap * tanhf(score / a.softcap);
    }
    float chunk_max = score;
    for (int o = 16; o > 0; o /= 2) chunk_max = fmaxf(chunk_max, __shfl_xor_sync(0xffffffffu, chunk_max, o));
    if (chunk_max == -INFINITY) continue;  // none of this row's keys here (warp-uniform)
    const float new_max = fmaxf(running_max, chunk_max);
    const float correction = expf(running_max - new_max);
    const float weight = expf(score - new_max);  // 0 for hidden keys
    float weight_sum = weight;
    for (int o = 16; o > 0; o /= 2) weight_sum += __shfl_xor_sync(0xffffffffu, weight_sum, o);
    denom = denom * correction + weight_sum;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) acc[j] *= correction;
#pragma unroll 8
    for (int i = 0; i < kChunk; ++i) {
      const float w = __shfl_sync(0xffffffffu, weight, i);
      const KvT* v_row = v_s + i * kStride;
      if constexpr (kPairs) {
#pragma unroll
        for (int j = 0; j < kPerLane; j += 2) {
          const float2 v = load_pair(v_row + dim_of<kPairs>(j, lane));
          acc[j] = fmaf(w, v.x, acc[j]);
          acc[j + 1] = fmaf(w, v.y, acc[j + 1]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) acc[j] = fmaf(w, to_float(v_row[j * 32 + lane]), acc[j]);
      }
    }
    running_max = new_max;
  }
  // kMma: row mma_row's token and head.
  const int mma_t = t0 + mma_tq;
  const int mma_h = static_cast<int>(blockIdx.y) * a.heads_per_block + mma_row % a.heads_per_block;
  if (partial != nullptr) {
    if constexpr (kMma) {
      // Every warp holds its rows' max and sum; their output tiles are spread over the warps.
      if (mma_active) {
        float* slot = partial + ((static_cast<int64_t>(blockIdx.z) * a.num_tokens + mma_t) * a.num_heads + mma_h) *
                                    (kHeadDim + 2);
        if (warp == 0 && lane % 4 == 0) {
          slot[0] = mma_rows.row_max * 0.6931471805599453f;  // base 2 to e: combine_dims takes expf
          slot[1] = mma_rows.row_sum;
        }
        mma_rows.for_each_output(rows, warp, lane, [&](int d, float v0, float v1) {
          *reinterpret_cast<float2*>(slot + 2 + d) = make_float2(v0, v1);
        });
      }
    } else if (active) {
      float* slot =
          partial + ((static_cast<int64_t>(blockIdx.z) * a.num_tokens + t) * a.num_heads + h) * (kHeadDim + 2);
      if (lane == 0) {
        slot[0] = running_max;
        slot[1] = denom;
      }
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) slot[2 + dim_of<kPairs>(j, lane)] = acc[j];
    }
    if (counters == nullptr) return;  // combine_splits_kernel combines
    // Publish this split's partials, then count it; the split that counts last reads them all.
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
      int* counter = counters + static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x;
      last = atomicAdd(counter, 1) == num_splits - 1;
      if (last) *counter = 0;  // every split has counted: ready for the next launch
    }
    __syncthreads();
    if (!last || !active) return;
    __threadfence();
    // The whole head in this warp: up to 16 live splits' loads in flight (64 registers).
    constexpr int kBatch = 64 / kPerLane < 16 ? 64 / kPerLane : 16;
    combine_dims<kPerLane, kBatch>(partial, num_splits, a.num_tokens, a.num_heads, kHeadDim, t, h, 0, a.out,
                                   a.out_bf16);
    return;
  }
  if constexpr (kMma) {
    if (!mma_active) return;
    const int64_t orow = (static_cast<int64_t>(mma_t) * a.num_heads + mma_h) * kHeadDim;
    const float inv = 1.0f / mma_rows.row_sum;
    mma_rows.for_each_output(rows, warp, lane, [&](int d, float v0, float v1) {
      *reinterpret_cast<float2*>(a.out + orow + d) = make_float2(v0 * inv, v1 * inv);
      if (a.out_bf16 != nullptr) {
        *reinterpret_cast<__nv_bfloat162*>(a.out_bf16 + orow + d) = __floats2bfloat162_rn(v0 * inv, v1 * inv);
      }
    });
    return;
  }
  if (!active) return;
  const int64_t orow = (static_cast<int64_t>(t) * a.num_heads + h) * kHeadDim;
  const float inv = 1.0f / denom;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const float v = acc[j] * inv;
    const int d = dim_of<kPairs>(j, lane);
    a.out[orow + d] = v;
    if (a.out_bf16 != nullptr) a.out_bf16[orow + d] = __float2bfloat16_rn(v);
  }
}

// One warp merges the splits' partial softmax sums of one (token, head), for the head
// dimensions j * 32 + lane, j in [j0, j0 + kSlices). Lane z holds split z's max and weight
// (splits z + 32, ... in later rounds), so the warp finds the maximum and the denominator in
// one shuffle reduction each; then it walks only the splits that saw keys (at batch 1 over a
// short context most are empty), in split order, the loads of kBatch live splits in flight
// together. Every dimension's sum runs over the splits in split order, whichever warp holds
// it and however the loads are batched: the same bits for the same split count.
template <int kSlices, int kBatch>
__device__ void combine_dims(const float* partial, int num_splits, int num_tokens, int num_heads, int64_t head_dim,
                             int t, int h, int j0, float* out, __nv_bfloat16* out_bf16) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t stride = static_cast<int64_t>(num_tokens) * num_heads * (head_dim + 2);
  const float* first = partial + (static_cast<int64_t>(t) * num_heads + h) * (head_dim + 2);
  float global_max = -INFINITY;
  // __ldcg: the partials may have been written by other blocks of this same kernel (L2 is
  // coherent, L1 is not).
  for (int z = lane; z < num_splits; z += 32) global_max = fmaxf(global_max, __ldcg(first + z * stride));
  for (int o = 16; o > 0; o /= 2) global_max = fmaxf(global_max, __shfl_xor_sync(0xffffffffu, global_max, o));
  float denom = 0.0f, acc[kSlices] = {};
  for (int z0 = 0; z0 < num_splits; z0 += 32) {
    const int z = z0 + lane;
    float weight = 0.0f;
    if (z < num_splits) {
      const float split_denom = __ldcg(first + z * stride + 1);  // 0: a split with none of this token's keys
      if (split_denom != 0.0f) weight = expf(__ldcg(first + z * stride) - global_max);
      denom = fmaf(weight, split_denom, denom);
    }
    unsigned live = __ballot_sync(0xffffffffu, weight != 0.0f);
    while (live != 0) {
      float w[kBatch], v[kBatch][kSlices];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int src = live != 0 ? __ffs(live) - 1 : 0;
        w[u] = live != 0 ? __shfl_sync(0xffffffffu, weight, src) : 0.0f;
        const float* slot = first + (z0 + src) * stride;
#pragma unroll
        for (int j = 0; j < kSlices; ++j) v[u][j] = live != 0 ? __ldcg(slot + 2 + (j0 + j) * 32 + lane) : 0.0f;
        live &= live - 1;
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
#pragma unroll
        for (int j = 0; j < kSlices; ++j) acc[j] = fmaf(w[u], v[u][j], acc[j]);
      }
    }
  }
  for (int o = 16; o > 0; o /= 2) denom += __shfl_xor_sync(0xffffffffu, denom, o);
  const int64_t orow = (static_cast<int64_t>(t) * num_heads + h) * head_dim;
  const float inv = 1.0f / denom;
#pragma unroll
  for (int j = 0; j < kSlices; ++j) {
    const float v = acc[j] * inv;
    out[orow + (j0 + j) * 32 + lane] = v;
    if (out_bf16 != nullptr) out_bf16[orow + (j0 + j) * 32 + lane] = __float2bfloat16_rn(v);
  }
}

// The rows of the attention kernel's tiles (blockIdx.x: a tile, then its tokens), one head a
// block (blockIdx.y) and 32 of its dimensions a warp, so that a warp's loads of up to 32 live
// splits are in flight together: one round trip to L2 where a warp holding the whole head
// needs one per 16 splits. Rows of other kernels (the tensor-core prefill) share the output
// and have no partials.
template <int kPerLane>
__global__ void combine_splits_kernel(AttentionArgs a, const float* partial, int num_splits, int64_t head_dim) {
  pdl_launch_dependents();
  pdl_wait();
  const int h = static_cast<int>(blockIdx.y), j0 = static_cast<int>(threadIdx.x) / 32;
  const int seq = a.tiles[2 * blockIdx.x], t0 = a.tiles[2 * blockIdx.x + 1];
  const int t_end = min(t0 + a.tile_tokens, a.query_start_loc[seq + 1]);
  for (int t = t0; t < t_end; ++t) {
    combine_dims<1, 32>(partial, num_splits, a.num_tokens, a.num_heads, head_dim, t, h, j0, a.out, a.out_bf16);
  }
}

template <int kPerLane, class KvT, bool kFromQkv, bool kMma>
void launch_attention(const AttentionArgs& a, const PagedKv& kv, const AttentionSplit& split, const QkvSource& source,
                      cudaStream_t stream) {
  const int rows = a.heads_per_block * a.tile_tokens;
  constexpr int kExtraRows = kFromQkv ? 1 : 0;  // the new key's row before its rotation
  const size_t smem = smem_bytes<KvT, kMma>(kPerLane * 32, rows + kExtraRows);
  const auto kernel = attention_kernel<kPerLane, KvT, kFromQkv, kMma>;
  // F32 caches at head_dim 256 need more than the default 48 KiB; asked for once.
  static const bool opted_in = [kernel] {
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(smem_bytes<KvT, kMma>(kPerLane * 32, kMaxRowsPerBlock + kExtraRows))),
          "cudaFuncSetAttribute (attention shared memory)");
    return true;
  }();
  (void)opted_in;
  const dim3 grid(static_cast<unsigned>(a.num_tiles), static_cast<unsigned>(a.num_heads / a.heads_per_block),
                  static_cast<unsigned>(std::max(1, split.num_splits)));
  const unsigned threads = static_cast<unsigned>(rows * 32);
  if (split.num_splits <= 1) {
    launch_pdl(kernel, grid, dim3(threads), smem, stream, "paged_attention", a, kv, 1, kChunk,
               static_cast<float*>(nullptr), static_cast<int*>(nullptr), source);
    return;
  }
  const int min_split_keys = std::max(kChunk, (split.min_keys + kChunk - 1) / kChunk * kChunk);
  launch_pdl(kernel, grid, dim3(threads), smem, stream, "paged_attention (split)", a, kv, split.num_splits,
             min_split_keys, split.workspace, split.counters, source);
  if (split.counters != nullptr) return;
  const dim3 combine_grid(static_cast<unsigned>(a.num_tiles), static_cast<unsigned>(a.num_heads));
  launch_pdl(combine_splits_kernel<kPerLane>, combine_grid, dim3(kPerLane * 32), 0, stream,
             "paged_attention (combine)", a, split.workspace, split.num_splits, kv.head_dim);
}

// The tensor cores take a BF16 cache's chunks where asked and the block's warps can hold the
// output tiles (mma_fits: by heads_per_block, so that a decode's fused and composed kernels
// choose alike).
template <int kPerLane, class KvT, bool kFromQkv>
void launch_attention(const AttentionArgs& a, const PagedKv& kv, const AttentionSplit& split, const QkvSource& source,
                      cudaStream_t stream) {
  if constexpr (std::is_same_v<KvT, __nv_bfloat16>) {
    if (a.chunks_on_tensor_cores && mma_fits(kPerLane * 32, a.heads_per_block)) {
      return launch_attention<kPerLane, KvT, kFromQkv, true>(a, kv, split, source, stream);
    }
  }
  launch_attention<kPerLane, KvT, kFromQkv, false>(a, kv, split, source, stream);
}

template <class KvT, bool kFromQkv>
void dispatch_head_dim(const AttentionArgs& args, const PagedKv& kv, const AttentionSplit& split,
                       const QkvSource& source, cudaStream_t stream) {
  switch (kv.head_dim / 32) {
    case 1: return launch_attention<1, KvT, kFromQkv>(args, kv, split, source, stream);
    case 2: return launch_attention<2, KvT, kFromQkv>(args, kv, split, source, stream);
    case 3: return launch_attention<3, KvT, kFromQkv>(args, kv, split, source, stream);
    case 4: return launch_attention<4, KvT, kFromQkv>(args, kv, split, source, stream);
    case 5: return launch_attention<5, KvT, kFromQkv>(args, kv, split, source, stream);
    case 6: return launch_attention<6, KvT, kFromQkv>(args, kv, split, source, stream);
    case 7: return launch_attention<7, KvT, kFromQkv>(args, kv, split, source, stream);
    default: return launch_attention<8, KvT, kFromQkv>(args, kv, split, source, stream);
  }
}

}  // namespace

AttentionTiling attention_tiling(int num_heads, int kv_heads, int max_new_tokens) {
  const int group = num_heads / kv_heads;
  int heads = std::min(group, kMaxRowsPerBlock);
  while (group % heads != 0) --heads;
  const int tokens = std::max(1, std::min(kMaxRowsPerBlock / heads, max_new_tokens));
  return {heads, tokens};
}

void attention_tiles(const int32_t* query_start_loc, int num_seqs, int tile_tokens, std::vector<int32_t>& tiles,
                     int min_new, int max_new) {
  tiles.clear();
  for (int s = 0; s < num_seqs; ++s) {
    const int num_new = query_start_loc[s + 1] - query_start_loc[s];
    if (num_new < min_new || num_new > max_new) continue;
    for (int t = query_start_loc[s]; t < query_start_loc[s + 1]; t += tile_tokens) {
      tiles.push_back(s);
      tiles.push_back(t);
    }
  }
}

int attention_splits(int num_blocks, int num_sms, int max_splits) {
  const int64_t wanted = 4 * static_cast<int64_t>(num_sms);
  if (num_blocks >= wanted) return 1;
  return static_cast<int>(std::min<int64_t>(std::max(1, max_splits), (wanted + num_blocks - 1) / num_blocks));
}

void write_kv(const float* k, const float* v, void* k_cache, void* v_cache, bool bf16, const int64_t* slot_mapping,
              int num_tokens, int64_t row, cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(num_tokens) * row;
  if (total <= 0) return;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((total + kThreads - 1) / kThreads);
  if (bf16) {
    write_kv_kernel<<<blocks, kThreads, 0, stream>>>(k, v, static_cast<__nv_bfloat16*>(k_cache),
                                                     static_cast<__nv_bfloat16*>(v_cache), slot_mapping, total, row);
  } else {
    write_kv_kernel<<<blocks, kThreads, 0, stream>>>(k, v, static_cast<float*>(k_cache), static_cast<float*>(v_cache),
                                                     slot_mapping, total, row);
  }
  check_launch("write_kv");
}

void paged_attention(const AttentionArgs& args, const PagedKv& kv, const AttentionSplit& split, cudaStream_t stream) {
  if (args.num_tokens <= 0) return;
  if (kv.head_dim % 32 != 0 || kv.head_dim > 256) {
    fail("paged_attention (CUDA): head_dim ", kv.head_dim, " is not a multiple of 32 up to 256");
  }
  if (kv.bf16) return dispatch_head_dim<__nv_bfloat16, false>(args, kv, split, QkvSource{}, stream);
  dispatch_head_dim<float, false>(args, kv, split, QkvSource{}, stream);
}

bool decode_attention_fits(int num_heads, int kv_heads, int64_t head_dim) {
  const int group = kv_heads > 0 ? num_heads / kv_heads : 0;
  return head_dim % 32 == 0 && head_dim > 0 && head_dim <= 256 && group >= 1 && group <= kMaxRowsPerBlock &&
         num_heads % kv_heads == 0;
}

void decode_attention(const AttentionArgs& args, const PagedKv& kv, const AttentionSplit& split,
                      const QkvSource& source, cudaStream_t stream) {
  if (args.num_tokens <= 0) return;
  PAGODA_CHECK(decode_attention_fits(args.num_heads, static_cast<int>(kv.kv_heads), kv.head_dim));
  PAGODA_CHECK(args.tile_tokens == 1 && args.heads_per_block == args.num_heads / kv.kv_heads);
  if (kv.bf16) return dispatch_head_dim<__nv_bfloat16, true>(args, kv, split, source, stream);
  dispatch_head_dim<float, true>(args, kv, split, source, stream);
}

}  // namespace pagoda::cuda
