// Launchers for the CUDA backend's kernels (one .cu file per family). Pointers are device
// memory; every launch goes on the given stream and is checked with check_launch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "sample/device_logprobs.h"
#include "sample/logit_edit.h"

namespace pagoda::cuda {

// Asks the GPU to bring bytes at p (16-byte aligned) into L2 for a kernel queued later,
// unless the num_seqs lengths at seq_lens (device memory) add up to more than max_context;
// nothing waits for it (prefetch.cu; a no-op below sm_90). The requests are spread over a few
// blocks per multiprocessor (num_sms).
void prefetch_l2(const void* p, int64_t bytes, const int32_t* seq_lens, int num_seqs, int64_t max_context,
                 int num_sms, cudaStream_t stream);

// Elementwise (elementwise.cu). n counts elements.
void to_bf16(const float* x, __nv_bfloat16* out, int64_t n, cudaStream_t stream);
void add(float* x, const float* y, int64_t n, cudaStream_t stream);
void add_bias(float* x, const float* bias, int64_t rows, int64_t dim, cudaStream_t stream);
void scale(float* x, float s, int64_t n, cudaStream_t stream);
void softcap(float* x, float cap, int64_t n, cudaStream_t stream);
// out = act(gate) * up; out may be gate. gelu is the tanh approximation. out_bf16 (may be
// null) receives a BF16 copy of out, the next matmul's input, saving a conversion pass.
void silu_mul(const float* gate, const float* up, float* out, __nv_bfloat16* out_bf16, int64_t n,
              cudaStream_t stream);
void gelu_mul(const float* gate, const float* up, float* out, __nv_bfloat16* out_bf16, int64_t n,
              cudaStream_t stream);

// The same over a stacked gate/up projection: gate_up [rows, 2d] (gate, then up) -> out [rows, d].
void silu_mul_stacked(const float* gate_up, int64_t rows, int64_t d, float* out, __nv_bfloat16* out_bf16,
                      cudaStream_t stream);
void gelu_mul_stacked(const float* gate_up, int64_t rows, int64_t d, float* out, __nv_bfloat16* out_bf16,
                      cudaStream_t stream);
// Copies the columns of x [rows, sum of widths] into the parts [rows, width], in order.
struct ColumnPart {
  float* out = nullptr;
  int64_t width = 0;
};
constexpr int kMaxColumnParts = 4;
struct ColumnParts {
  ColumnPart part[kMaxColumnParts];
};
void split_columns(const float* x, int64_t rows, const ColumnPart* parts, int num_parts, cudaStream_t stream);

// out[n, m] = x[n, k] (BF16) . w[m, k]^T (BF16), F32, for the skinny n of decode steps
// (gemv.cu), where gemv_fits: n <= kMaxGemvRows, k a multiple of 8, x and w 16-byte aligned.
constexpr int64_t kMaxGemvRows = 4;
bool gemv_fits(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w);
void gemv(const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out,
          cudaStream_t stream);
// How gemv runs a weight: 16-byte loads in flight per lane (4 or 8), warps sharing one row
// (1, 2, 4, or 8 for the plain kernel), a block's next row group's first loads issued during
// its current one's last (prefetch_rows), and a grid of at most blocks_per_sm blocks a
// multiprocessor, each walking several row groups (0: one block a row group, or with a
// fused norm as many as fit at once). gemv takes gemv_config's choice for a plain (unfused)
// or fused GEMV; gemv_with and gemv_fused_with any (tools/device/kernel_bench.cpp). Only
// unroll and split change the bits.
struct GemvConfig {
  int unroll;
  int split;
  bool prefetch_rows = false;
  int blocks_per_sm = 0;
};
GemvConfig gemv_config(int64_t n, int64_t m, int64_t k, bool plain);
void gemv_with(const GemvConfig& config, const __nv_bfloat16* x, int64_t n, int64_t k, const __nv_bfloat16* w,
               int64_t m, float* out, cudaStream_t stream);

// The same GEMV with the ops around a decode step's matmuls taken in (gemv.cu): with
// norm_weight, x is rms_norm(x_f32) (F32 [n, k]) rather than x; with a gate, w stacks gate and
// up rows ([m, k], m even) and out [n, m / 2] = act(x . gate^T) * (x . up^T), out_bf16 (may be
// null) receiving a BF16 copy; with accumulate, out += the result. Fits (gemv_fused_fits)
// where gemv does, the normed rows in kMaxGemvNormedBytes of shared memory, m even if gated.
enum class GemvGate { None, Silu, Gelu };
struct GemvFusion {
  const __nv_bfloat16* x = nullptr;  // [n, k], without norm_weight
  const float* x_f32 = nullptr;      // [n, k], with norm_weight
  const float* norm_weight = nullptr;
  float eps = 0.0f;
  GemvGate gate = GemvGate::None;
  __nv_bfloat16* out_bf16 = nullptr;
  bool accumulate = false;
};
// A block may hold 48 KiB of shared memory without opting in, static arrays included: the
// kernel's own (partial sums, the norm's warp sums) take a few hundred bytes of it.
constexpr int64_t kMaxGemvNormedBytes = 47 * 1024;
bool gemv_fused_fits(int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, const GemvFusion& fusion);
void gemv_fused(int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out, const GemvFusion& fusion,
                cudaStream_t stream);
// The fused kernels are built for gemv_config's (unroll, split) choices only; others fail.
void gemv_fused_with(const GemvConfig& config, int64_t n, int64_t k, const __nv_bfloat16* w, int64_t m, float* out,
                     const GemvFusion& fusion, cudaStream_t stream);

// out = x / rms(x) * weight per row (norm.cu); out may be x; out_bf16 as for silu_mul.
void rms_norm(const float* x, const float* weight, float eps, int64_t rows, int64_t dim, float* out,
              __nv_bfloat16* out_bf16, cudaStream_t stream);

// Rotates x [tokens, heads, head_dim] in place (rope.cu); inv_freq has rot_dim / 2 entries.
void rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const int32_t* positions,
          const float* inv_freq, int rot_dim, bool neox, float attention_factor, cudaStream_t stream);

// A stacked q/k/v projection's output into attention's inputs (attention_inputs.cu): qkv
// [tokens, (heads + 2 kv_heads) * head_dim] -> q_out [tokens, heads, head_dim] normed
// (q_norm may be null) and rotated; k normed (k_norm may be null), rotated and, with v,
// written to the caches (BF16 when bf16, else F32) at slot_mapping (< 0: skipped).
struct QkvLayout {
  int64_t heads;
  int64_t kv_heads;
  int head_dim;
  int rot_dim;
  bool neox;
  float attention_factor;
};
bool split_rope_write_kv_fits(int64_t head_dim);
void split_rope_write_kv(const float* qkv, int64_t tokens, const QkvLayout& layout, const int32_t* positions,
                         const float* inv_freq, const float* q_norm, const float* k_norm, float eps, float* q_out,
                         void* k_cache, void* v_cache, bool bf16, const int64_t* slot_mapping, cudaStream_t stream);

// Ids sampled ahead on the device (Backend::sample_async): a negative id -(r + 1) in an
// embedding's ids stands for ids[r] here (one handed back, -1, reads as 0).
struct Ahead {
  const int32_t* ids = nullptr;
  int32_t capacity = 0;
};

// out[i] = table[ids[i]] as F32 (embedding.cu). table rows are dim BF16 or F32 values.
void embedding_bf16(const __nv_bfloat16* table, const int32_t* ids, Ahead ahead, int n, int64_t dim, float* out,
                    cudaStream_t stream);
void embedding_f32(const float* table, const int32_t* ids, Ahead ahead, int n, int64_t dim, float* out,
                   cudaStream_t stream);

// The paged KV cache (attention.cu); caches are [num_blocks, block_size, kv_heads, head_dim],
// BF16 (bf16 set) or F32.
struct PagedKv {
  const void* k_cache;
  const void* v_cache;
  bool bf16;
  int64_t block_size;
  int64_t kv_heads;
  int64_t head_dim;
};

// Converts to the caches' dtype on the way in.
void write_kv(const float* k, const float* v, void* k_cache, void* v_cache, bool bf16, const int64_t* slot_mapping,
              int num_tokens, int64_t row, cudaStream_t stream);

// Causal attention of every new token over its sequence's cached context, the metadata of
// backend.h's AttentionMetadata in device memory.
struct AttentionArgs {
  const float* q;             // [num_tokens, num_heads, head_dim]
  float* out;                 // same shape
  __nv_bfloat16* out_bf16;    // null, or a BF16 copy of out (the o projection's input)
  int num_tokens;
  int num_seqs;
  int num_heads;
  const int32_t* query_start_loc;  // [num_seqs + 1]
  const int32_t* seq_lens;         // [num_seqs]
  const int32_t* block_tables;     // [num_seqs, max_blocks_per_seq]
  int max_blocks_per_seq;
  float scale;
  int sliding_window;
  float softcap;
  // The work split (attention_tiling, attention_tiles): num_tiles (seq, first token) pairs.
  const int32_t* tiles;
  int num_tiles;
  int tile_tokens;
  int heads_per_block;
  // The CUDA-core kernel (attention.cu) takes a BF16 cache's chunks on the tensor cores where
  // mma_fits (attention_mma.cuh); false keeps every chunk on the CUDA cores.
  bool chunks_on_tensor_cores = true;
};

// How a block's rows are made: heads_per_block query heads of one KV head (the largest
// divisor of the GQA group up to 8) times tile_tokens consecutive new tokens of one
// sequence (as many as fit in 8 rows, at most the batch's longest run of new tokens).
struct AttentionTiling {
  int heads_per_block;
  int tile_tokens;
};
AttentionTiling attention_tiling(int num_heads, int kv_heads, int max_new_tokens);
// tiles = (seq, first token) for every tile of every sequence with min_new to max_new new
// tokens, from the host's query_start_loc.
void attention_tiles(const int32_t* query_start_loc, int num_seqs, int tile_tokens, std::vector<int32_t>& tiles,
                     int min_new = 0, int max_new = 1 << 30);

// How a launch splits each context (flash-decoding): num_splits <= 1 runs one pass; else
// split z of a sequence covers a 32-aligned z-th of its keys, and workspace holds
// num_splits * num_tokens * num_heads * (head_dim + 2) floats.
// With counters (one int per (tile, head group), zero, left zero), the split that finishes
// last combines them in the attention kernel itself; without, a second kernel does.
struct AttentionSplit {
  int num_splits = 1;
  int min_keys = 32;  // a split covers at least this many keys (rounded up to 32)
  float* workspace = nullptr;
  int* counters = nullptr;
};

// How many splits fill the GPU: enough blocks for ~4 per SM, at most max_splits. A function of
// the batch's shape alone, not of its context lengths (a graph captured for a batch size
// serves every length; a split past a sequence's keys ends at once). Depends on the batch, so
// it is 1 in batch-invariant mode.
int attention_splits(int num_blocks, int num_sms, int max_splits = 64);

void paged_attention(const AttentionArgs& args, const PagedKv& kv, const AttentionSplit& split,
                     cudaStream_t stream);

// paged_attention for a batch of decodes (one new token a sequence) that makes its own
// inputs: every block norms and rotates its query heads from the stacked projection qkv, and
// the block whose keys end with the new token makes its key and value, writes them to the
// caches (split_rope_write_kv's work, the same bits) and uses them, so one kernel does what
// split_rope_write_kv and paged_attention do, and q never goes through memory. args.q is not
// read. Where decode_attention_fits: head_dim a multiple of 32 up to 256, and a GQA group
// of at most 8 query heads (one block a KV head).
struct QkvSource {
  const float* qkv;  // [num_tokens, (heads + 2 kv_heads) * head_dim]
  QkvLayout layout;
  const int32_t* positions;  // [num_tokens]
  const float* inv_freq;     // [rot_dim / 2]
  const float* q_norm;       // [head_dim] or null
  const float* k_norm;       // [head_dim] or null
  float eps;
  const int64_t* slot_mapping;  // [num_tokens]; < 0: a padding token, nothing written
};
bool decode_attention_fits(int num_heads, int kv_heads, int64_t head_dim);
void decode_attention(const AttentionArgs& args, const PagedKv& kv, const AttentionSplit& split,
                      const QkvSource& source, cudaStream_t stream);

// The same on the tensor cores for prefill chunks (attention_prefill.cu), where
// prefill_attention_fits: BF16 caches, head_dim 64, 96 or 128, GQA groups of up to 64 heads.
// args.tiles come from attention_tiles with prefill_tile_tokens; heads_per_block is the whole
// group. q and P are rounded to BF16; a row's bits do not depend on its tile.
bool prefill_attention_fits(const PagedKv& kv, int num_heads);
int prefill_tile_tokens(int num_heads, int kv_heads);
void prefill_attention(const AttentionArgs& args, const PagedKv& kv, cudaStream_t stream);

// One row of sample() (sampling.cu): backend.h's SampleRowSpec, which this C++17 header
// cannot include.
struct SampleRowArgs {
  int32_t logit_row;
  int32_t greedy;
  float temperature;
  int32_t top_k;
  float top_p;
  float min_p;
  double uniform;
  int32_t edits_begin;
  int32_t edits_end;
  RowPenalties penalties;
};

// Applies rows[r]'s edits edits[edits_begin, edits_end) to its logits row in place, with the
// arithmetic of sample/logit_edits.cpp's apply_logit_edits (each step rounded on its own).
// A row's edits name distinct tokens, within [0, vocab).
void edit_logits(float* logits, int64_t vocab, const SampleRowArgs* rows, int num_rows, const LogitEdit* edits,
                 cudaStream_t stream);

// ids[r] = the token drawn for rows[r] from logits [*, vocab], or -1 when the row holds a
// NaN or +inf logit or no finite one (the host sampler takes those). Rows without a top_k or
// top_p cut-off (sample_row_is_split) are split over many blocks; the others take one block
// each, launched only when any_cut_offs. parts: sample_parts_bytes(num_rows) of device memory.
inline bool sample_row_is_split(const SampleRowArgs& row) {
  return row.greedy != 0 || (row.top_k <= 0 && !(row.top_p < 1.0f));
}
size_t sample_parts_bytes(int num_rows);
void sample(const float* logits, int64_t vocab, const SampleRowArgs* rows, int num_rows, bool any_cut_offs,
            void* parts, int32_t* ids, cudaStream_t stream);

// Logprobs of sampled rows (logprobs.cu). rows[l]: logits row logit_row holds the row, its
// token is ids[sample_row], and it wants num_top (<= kMaxDeviceLogprobs) top tokens.
struct LogprobsRowArgs {
  int32_t logit_row;
  int32_t sample_row;
  int32_t num_top;
};
// raw [num_rows, vocab] = the rows' logits, before sample()'s edits change them.
void gather_logit_rows(const float* logits, int64_t vocab, const LogprobsRowArgs* rows, int num_rows, float* raw,
                       cudaStream_t stream);
// out[l] = the raw logprobs of rows[l] (raw: gather_logit_rows' copy) at token
// ids[rows[l].sample_row]. A row the host must take (a NaN or +inf raw logit, or no finite
// one) gets ids[sample_row] = -1; one whose id already is -1 is left alone.
void raw_logprobs(const float* raw, int64_t vocab, const LogprobsRowArgs* rows, int num_rows, int32_t* ids,
                  DeviceLogprobs* out, cudaStream_t stream);

}  // namespace pagoda::cuda
