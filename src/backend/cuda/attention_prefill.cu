// Paged attention for prefill chunks on the tensor cores (FlashAttention-2 style), over the
// BF16 KV cache.
//
// A block of 4 warps takes 64 query rows: (token, head) pairs of one sequence whose heads
// share one KV head (tile_tokens = 64 / group tokens times the group's heads), so each K/V
// row is read once per GQA group. It walks the keys in tiles of 64 at absolute positions
// (multiples of 64), staged in shared memory by cp.async two tiles deep. Each warp owns 16
// rows: S = Q K^T and O += P V are mma.sync m16n8k16 (BF16 in, F32 accumulate), the online
// softmax runs on S in registers (F32), and P goes back to the tensor cores as BF16 straight
// from the accumulator layout.
//
// Rounding: q and P are rounded to BF16 (the cache already is), so rows agree with the
// CUDA-core kernel (attention.cu) to BF16 accuracy, not bit for bit. A row's result does not
// depend on the other rows of its block (an mma row only sees its own A row) nor on which
// tile it falls in: a key tile in which none of its keys are visible leaves its running
// sums exactly as they were. So a prompt gives the same bits however it is chunked.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

#include "backend/cuda/async_copy.cuh"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/mma.cuh"

namespace pagoda::cuda {

namespace {

constexpr int kWarps = 4;
constexpr int kRows = 16 * kWarps;  // query rows a block
constexpr int kKeys = 64;           // keys a tile
constexpr int kPad = 8;             // BF16 of padding a shared-memory row: 8 rows of ldmatrix hit 32 banks
constexpr float kLog2e = 1.4426950408889634f;

template <int D>
constexpr size_t smem_bytes() {
  return size_t{2} * 2 * kKeys * (D + kPad) * sizeof(__nv_bfloat16);  // 2 stages of K and V
}

// Fragment layouts: mma.cuh.
template <int D>
__global__ void __launch_bounds__(kWarps * 32) prefill_attention_kernel(AttentionArgs a, PagedKv kv) {
  constexpr int kStride = D + kPad;
  constexpr int kSteps = D / 16;     // k-steps of Q K^T; also pairs of 8-wide output column tiles
  constexpr int kChunks = D / 8;     // 16-byte pieces of a K/V row
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, q4 = lane % 4;
  const int tile = a.num_tiles - 1 - static_cast<int>(blockIdx.x);  // a sequence's longest tiles first
  const int seq = a.tiles[2 * tile], t0 = a.tiles[2 * tile + 1];
  const int q_begin = a.query_start_loc[seq], q_end = a.query_start_loc[seq + 1];
  const int ntok = min(a.tile_tokens, q_end - t0);
  const int context = a.seq_lens[seq];
  const int pos0 = context - (q_end - q_begin) + (t0 - q_begin);  // the new tokens end the context
  const int group = a.heads_per_block;
  const int kvh = static_cast<int>(blockIdx.y);

  // This thread's two rows, warp * 16 + g and + 8.
  int row_pos[2], row_first[2];
  bool row_active[2];
  const float* row_q[2];
  int64_t row_offset[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = warp * 16 + g + 8 * i;
    const int tok = r / group, head = kvh * group + r % group;
    row_active[i] = tok < ntok;
    row_pos[i] = pos0 + tok;
    row_first[i] = a.sliding_window > 0 ? max(0, row_pos[i] - a.sliding_window + 1) : 0;
    const int64_t offset = (static_cast<int64_t>(t0 + tok) * a.num_heads + head) * D;
    row_q[i] = row_active[i] ? a.q + offset : nullptr;
    row_offset[i] = offset;
  }

  // Q as A fragments, rounded to BF16 (rows past the tile are zeros).
  uint32_t qa[kSteps][4];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = s * 16 + half * 8 + 2 * q4;
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const float2 v = row_active[i] ? *reinterpret_cast<const float2*>(row_q[i] + col) : make_float2(0, 0);
        qa[s][2 * half + i] = pack_bf16(v.x, v.y);
      }
    }
  }

  const int block_first = a.sliding_window > 0 ? max(0, pos0 - a.sliding_window + 1) : 0;
  const int begin = block_first / kKeys * kKeys;
  const int end = pos0 + ntok;  // one past the block's last visible key
  const int num_key_tiles = (end - begin + kKeys - 1) / kKeys;
  const int pos_last = pos0 + ntok - 1;

  const auto* k_cache = static_cast<const __nv_bfloat16*>(kv.k_cache);
  const auto* v_cache = static_cast<const __nv_bfloat16*>(kv.v_cache);
  const int32_t* blocks = a.block_tables + static_cast<int64_t>(seq) * a.max_blocks_per_seq;
  const int block_size = static_cast<int>(kv.block_size);
  const auto load_tile = [&](int first_key, int stage) {
    __nv_bfloat16* k_s = smem + stage * 2 * kKeys * kStride;
    __nv_bfloat16* v_s = k_s + kKeys * kStride;
    for (int i = static_cast<int>(threadIdx.x); i < kKeys * kChunks; i += kWarps * 32) {
      const int r = i / kChunks, col = (i % kChunks) * 8;
      const int p = first_key + r;
      const bool valid = p < end;
      int64_t offset = 0;
      if (valid) {
        const int64_t slot = static_cast<int64_t>(blocks[p / block_size]) * block_size + p % block_size;
        offset = (slot * kv.kv_heads + kvh) * D + col;
      }
      copy16_async(smem_address(k_s + r * kStride + col), k_cache + offset, valid);
      copy16_async(smem_address(v_s + r * kStride + col), v_cache + offset, valid);
    }
    commit_copies();
  };

  float o[2 * kSteps][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};
  const int ld_row = lane % 8, ld_matrix = lane / 8;  // ldmatrix: the row address this lane gives
  load_tile(begin, 0);
  for (int it = 0; it < num_key_tiles; ++it) {
    const int c = begin + it * kKeys;
    if (it + 1 < num_key_tiles) {
      load_tile(c + kKeys, (it + 1) & 1);
      wait_copies<1>();
    } else {
      wait_copies<0>();
    }
    __syncthreads();
    const __nv_bfloat16* k_s = smem + (it & 1) * 2 * kKeys * kStride;
    const __nv_bfloat16* v_s = k_s + kKeys * kStride;

    // S = Q K^T: 16 rows x 64 keys a warp, as 8 column tiles of 8 keys.
    float s[kKeys / 8][4] = {};
#pragma unroll
    for (int st = 0; st < kSteps; ++st) {
#pragma unroll
      for (int pair = 0; pair < kKeys / 16; ++pair) {
        // Matrices: (keys +0..7, dims +0..7), (+0..7, +8..15), (+8..15, +0..7), (+8..15, +8..15).
        const int key = pair * 16 + (ld_matrix / 2) * 8 + ld_row, dim = st * 16 + (ld_matrix % 2) * 8;
        uint32_t b[4];
        ldmatrix_x4(smem_address(k_s + key * kStride + dim), b);
        mma(s[2 * pair], qa[st], b[0], b[1]);
        mma(s[2 * pair + 1], qa[st], b[2], b[3]);
      }
    }

    // Scale, softcap and mask; a tile every key of which every row sees needs no mask.
    const bool unmasked = c + kKeys - 1 <= pos0 && (a.sliding_window <= 0 || c >= pos_last - a.sliding_window + 1);
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e / 2, p = c + n * 8 + 2 * q4 + (e & 1);
        float x = s[n][e] * a.scale;
        if (a.softcap > 0.0f) x = a.softcap * tanhf(x / a.softcap);
        x *= kLog2e;  // base 2 from here on
        if (!unmasked && (p > row_pos[i] || p < row_first[i])) x = -INFINITY;
        s[n][e] = x;
        tile_max[i] = fmaxf(tile_max[i], x);
      }
    }
    float correction[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(0xffffffffu, tile_max[i], 1));
      tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(0xffffffffu, tile_max[i], 2));
      const float new_max = fmaxf(row_max[i], tile_max[i]);
      // No key seen yet: a finite base keeps exp2 of -inf at 0 (never inf - inf). Only
      // differences go into exp2, never a product an FMA could fuse, so a tile in which
      // the row sees nothing gives a correction of exactly 1 and weights of exactly 0.
      const float base = new_max == -INFINITY ? 0.0f : new_max;
      correction[i] = exp2f(row_max[i] - base);
      row_max[i] = new_max;
      float sum = __fmul_rn(row_sum[i], correction[i]);
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n) {
        s[n][2 * i] = exp2f(s[n][2 * i] - base);
        s[n][2 * i + 1] = exp2f(s[n][2 * i + 1] - base);
        sum = __fadd_rn(sum, __fadd_rn(s[n][2 * i], s[n][2 * i + 1]));
      }
      row_sum[i] = sum;
    }
#pragma unroll
    for (int n = 0; n < 2 * kSteps; ++n) {
      o[n][0] *= correction[0];
      o[n][1] *= correction[0];
      o[n][2] *= correction[1];
      o[n][3] *= correction[1];
    }

    // O += P V: P from the accumulators as A fragments of 16 keys each.
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      const uint32_t pa[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]), pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                              pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int pair = 0; pair < kSteps; ++pair) {
        // Transposed matrices: (keys +0..7, dims +0..7), (+8..15, +0..7), (+0..7, +8..15), (+8..15, +8..15).
        const int key = kk * 16 + (ld_matrix % 2) * 8 + ld_row, dim = pair * 16 + (ld_matrix / 2) * 8;
        uint32_t b[4];
        ldmatrix_x4_trans(smem_address(v_s + key * kStride + dim), b);
        mma(o[2 * pair], pa, b[0], b[1]);
        mma(o[2 * pair + 1], pa, b[2], b[3]);
      }
    }
    __syncthreads();  // this stage is consumed before the next iteration refills it
  }

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    row_sum[i] += __shfl_xor_sync(0xffffffffu, row_sum[i], 1);
    row_sum[i] += __shfl_xor_sync(0xffffffffu, row_sum[i], 2);
    if (!row_active[i]) continue;
    const float inv = 1.0f / row_sum[i];
#pragma unroll
    for (int n = 0; n < 2 * kSteps; ++n) {
      const float2 v = make_float2(o[n][2 * i] * inv, o[n][2 * i + 1] * inv);
      const int64_t at = row_offset[i] + n * 8 + 2 * q4;
      *reinterpret_cast<float2*>(a.out + at) = v;
      if (a.out_bf16 != nullptr) *reinterpret_cast<__nv_bfloat162*>(a.out_bf16 + at) = __floats2bfloat162_rn(v.x, v.y);
    }
  }
}

template <int D>
void launch(const AttentionArgs& a, const PagedKv& kv, cudaStream_t stream) {
  constexpr size_t smem = smem_bytes<D>();
  static const bool opted_in = [] {
    check(cudaFuncSetAttribute(prefill_attention_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(smem)),
          "cudaFuncSetAttribute (prefill attention shared memory)");
    return true;
  }();
  (void)opted_in;
  const dim3 grid(static_cast<unsigned>(a.num_tiles), static_cast<unsigned>(kv.kv_heads));
  prefill_attention_kernel<D><<<grid, kWarps * 32, smem, stream>>>(a, kv);
  check_launch("prefill_attention");
}

}  // namespace

bool prefill_attention_fits(const PagedKv& kv, int num_heads) {
  const int64_t group = num_heads / kv.kv_heads;
  return kv.bf16 && (kv.head_dim == 64 || kv.head_dim == 96 || kv.head_dim == 128) && group >= 1 &&
         group <= kRows && kv.block_size > 0;
}

int prefill_tile_tokens(int num_heads, int kv_heads) { return kRows / (num_heads / kv_heads); }

void prefill_attention(const AttentionArgs& a, const PagedKv& kv, cudaStream_t stream) {
  if (a.num_tiles <= 0) return;
  switch (kv.head_dim) {
    case 64: return launch<64>(a, kv, stream);
    case 96: return launch<96>(a, kv, stream);
    default: return launch<128>(a, kv, stream);
  }
}

}  // namespace pagoda::cuda
