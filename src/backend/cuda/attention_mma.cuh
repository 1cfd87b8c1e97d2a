// The CUDA-core attention kernel's per-chunk arithmetic (attention.cu) on the tensor cores,
// for BF16 caches: a block's rows (up to 8 (token, head) pairs of one KV head, one warp each)
// become rows 0..7 of mma.sync m16n8k16 tiles (rows 8..15 stay zero), so a 32-key chunk is
// S = Q K^T in four 8-key tiles and O += P V in head_dim / 8 output tiles, a few dozen mma
// instead of each warp's 128-long dot products and 32 shuffled value rows one after the
// other (~3 us a chunk on an H100: what kept splits from covering more keys, and the decode
// attention from keeping up with its memory at 256 sequences).
//
// The block's warps share the work: warp w computes the key tiles w, w + rows, ... of S and
// the output tiles w, w + rows, ...; the tiles' maxima, sums and P (BF16) meet in shared
// memory. Each value is computed by one fixed sequence of instructions whichever warp runs
// it, and the maxima and sums are taken over the tiles in order, so a row's result depends
// on neither the number of rows in its block nor the rows it shares it with: batch
// invariance holds as on the CUDA cores, and the fused decode attention (kFromQkv) gives the
// same bits as the composition.
//
// Rounding: q and P are rounded to BF16 as in the prefill kernel (attention_prefill.cu), so
// rows agree with the CPU to BF16 accuracy, not F32's. Scores go to base 2 once and only
// differences enter exp2 (a chunk a row sees nothing of leaves its sums exactly as they were).
#pragma once

#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

#include "backend/cuda/mma.cuh"

namespace pagoda::cuda {

constexpr int kMmaChunk = 32;        // keys a chunk (attention.cu's kChunk)
constexpr int kMmaKeyTiles = kMmaChunk / 8;
constexpr int kMmaMaxRows = 8;       // rows a block: m16n8k16's rows 0..7
constexpr int kMmaMaxDimTiles = 8;   // output tiles a warp holds at most

// The shared-memory row stride of a chunk's K/V rows for the tensor cores, in BF16: 16-byte
// rows for ldmatrix, 136 elements at head_dim 128, so the eight rows an ldmatrix or a
// fragment's loads touch fall in distinct banks.
__host__ __device__ constexpr int mma_stride(int head_dim) { return head_dim + 8; }

// Whether a block of heads_per_block warps (at least: a decode's) can hold the output tiles.
__host__ __device__ constexpr bool mma_fits(int head_dim, int heads_per_block) {
  return head_dim % 16 == 0 && heads_per_block >= 1 && heads_per_block <= kMmaMaxRows &&
         head_dim / 8 <= kMmaMaxDimTiles * heads_per_block;
}

// Where the warps of a block meet within a chunk.
struct MmaExchange {
  float tile_max[kMmaKeyTiles][kMmaMaxRows];
  float tile_sum[kMmaKeyTiles][kMmaMaxRows];
  uint32_t p[kMmaMaxRows][20];  // P as BF16 pairs, [row][key tile * 4 + q]; 20: conflict-free rows
};

// One lane's part: lane = 4 g + q works on row g (any g < 8: rows past the block's are masked).
template <int kHeadDim>
struct MmaRows {
  static constexpr int kSteps = kHeadDim / 16;
  static constexpr int kDimTiles = kHeadDim / 8;
  static constexpr float kLog2e = 1.4426950408889634f;

  uint32_t qa[kSteps][2];  // row g's query: A registers 0 and 2 (1 and 3, rows 8..15, are zero)
  float o[kMmaMaxDimTiles][4] = {};
  float row_max = -INFINITY;  // base 2
  float row_sum = 0.0f;

  // Row g's query from q_row (F32, head_dim; null: a row of zeros), rounded to BF16.
  __device__ void load_q(const float* q_row, int lane) {
    const int q4 = lane % 4;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int col = s * 16 + half * 8 + 2 * q4;
        const float2 v = q_row != nullptr ? make_float2(q_row[col], q_row[col + 1]) : make_float2(0.0f, 0.0f);
        qa[s][half] = pack_bf16(v.x, v.y);
      }
    }
  }

  // The chunk at keys c.. staged in k_s / v_s (rows of mma_stride), for a block of `rows`
  // warps. visible(p): whether row g sees key p. Every warp of the block calls this (it holds
  // two __syncthreads).
  template <class Visible>
  __device__ void chunk(const __nv_bfloat16* k_s, const __nv_bfloat16* v_s, int c, int rows, int warp, int lane,
                        float scale, float softcap, Visible visible, MmaExchange& x) {
    constexpr int kStride = mma_stride(kHeadDim);
    const int g = lane / 4, q4 = lane % 4;
    float s[kMmaKeyTiles][2];
#pragma unroll
    for (int i = 0; i < kMmaKeyTiles; ++i) {
      const int kt = warp + i * rows;
      if (kt >= kMmaKeyTiles) break;
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      const __nv_bfloat16* k_row = k_s + (kt * 8 + g) * kStride + 2 * q4;  // key kt * 8 + g: B's column g
#pragma unroll
      for (int st = 0; st < kSteps; ++st) {
        const uint32_t a[4] = {qa[st][0], 0u, qa[st][1], 0u};
        mma(acc, a, *reinterpret_cast<const uint32_t*>(k_row + st * 16),
            *reinterpret_cast<const uint32_t*>(k_row + st * 16 + 8));
      }
      float tile_max = -INFINITY;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float v = acc[e] * scale;
        if (softcap > 0.0f) v = softcap * tanhf(v / softcap);
        v *= kLog2e;
        if (!visible(c + kt * 8 + 2 * q4 + e)) v = -INFINITY;
        s[i][e] = v;
        tile_max = fmaxf(tile_max, v);
      }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      if (q4 == 0) x.tile_max[kt][g] = tile_max;
    }
    __syncthreads();

    float chunk_max = x.tile_max[0][g];
#pragma unroll
    for (int kt = 1; kt < kMmaKeyTiles; ++kt) chunk_max = fmaxf(chunk_max, x.tile_max[kt][g]);
    const float new_max = fmaxf(row_max, chunk_max);
    // Nothing seen yet: a finite base keeps exp2 of -inf at 0 (never inf - inf).
    const float base = new_max == -INFINITY ? 0.0f : new_max;
    const float correction = exp2f(row_max - base);
    row_max = new_max;
#pragma unroll
    for (int i = 0; i < kMmaKeyTiles; ++i) {
      const int kt = warp + i * rows;
      if (kt >= kMmaKeyTiles) break;
      const float w0 = exp2f(s[i][0] - base), w1 = exp2f(s[i][1] - base);
      x.p[g][kt * 4 + q4] = pack_bf16(w0, w1);
      float sum = __fadd_rn(w0, w1);
      sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, 1));
      sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, 2));
      if (q4 == 0) x.tile_sum[kt][g] = sum;
    }
    __syncthreads();

    float chunk_sum = x.tile_sum[0][g];
#pragma unroll
    for (int kt = 1; kt < kMmaKeyTiles; ++kt) chunk_sum = __fadd_rn(chunk_sum, x.tile_sum[kt][g]);
    row_sum = __fadd_rn(__fmul_rn(row_sum, correction), chunk_sum);
#pragma unroll
    for (int j = 0; j < kMmaMaxDimTiles; ++j) {
      o[j][0] *= correction;
      o[j][1] *= correction;
    }
    // O += P V over the chunk's two 16-key steps.
#pragma unroll
    for (int kk = 0; kk < kMmaChunk / 16; ++kk) {
      const uint32_t a[4] = {x.p[g][(2 * kk) * 4 + q4], 0u, x.p[g][(2 * kk + 1) * 4 + q4], 0u};
      const __nv_bfloat16* v_rows = v_s + (kk * 16 + lane % 16) * kStride;  // lanes 0-15: keys +0..15
#pragma unroll
      for (int j = 0; j < kMmaMaxDimTiles; ++j) {
        const int nt = warp + j * rows;
        if (nt >= kDimTiles) break;
        uint32_t b0, b1;
        ldmatrix_x2_trans(smem_address(v_rows + nt * 8), b0, b1);
        mma(o[j], a, b0, b1);
      }
    }
  }

  // Row g's dimensions that this lane holds: out(d, value) for its output tiles' columns.
  template <class Out>
  __device__ void for_each_output(int rows, int warp, int lane, Out out) const {
#pragma unroll
    for (int j = 0; j < kMmaMaxDimTiles; ++j) {
      const int nt = warp + j * rows;
      if (nt >= kDimTiles) break;
      out(nt * 8 + 2 * (lane % 4), o[j][0], o[j][1]);
    }
  }
};

}  // namespace pagoda::cuda
