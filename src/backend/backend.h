// The one interface every compute backend implements: memory plus fused-kernel-sized ops.
// Model code (src/model) describes a forward pass only in terms of these calls, so a new
// backend (CUDA) is a new implementation of this class and nothing above it changes.
//
// Conventions: activations are F32 row-major; `x` of shape [rows, cols] is processed
// per row. Weights may be in any DType (block-quantized included). Outputs are
// preallocated by the caller with alloc() and may alias inputs where noted.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/error.h"
#include "core/tensor.h"
#include "sample/device_logprobs.h"
#include "sample/logit_edit.h"

namespace pagoda {

// Rotary embedding for one attention type. inv_freq has rot_dim/2 entries (already
// including any rope scaling); dimensions past rot_dim are left unrotated.
struct RopeConfig {
  const float* inv_freq = nullptr;
  int rot_dim = 0;
  // true: rotate pairs (i, i + rot_dim/2) (GPT-NeoX / HF rotate_half);
  // false: rotate adjacent pairs (2i, 2i+1) (GPT-J / Meta layout, GGUF llama).
  bool neox = true;
  float attention_factor = 1.0f;  // multiplies cos and sin (YaRN mscale); 1 otherwise
};

// Per-head RMSNorms of q and k before the rotation (Qwen3's and Gemma 3's q_norm/k_norm):
// weights [head_dim] F32; null when the model has none.
struct HeadNorms {
  const Tensor* q = nullptr;
  const Tensor* k = nullptr;
  float eps = 0.0f;
};

// Where the tokens of a flattened batch live in the paged KV cache. One instance
// serves every layer of a step. Sequence s owns tokens
// [query_start_loc[s], query_start_loc[s+1]) of the batch; its context after this step
// is seq_lens[s] tokens, the last of which are the new ones. Its KV cache blocks are
// block_tables[s * max_blocks_per_seq + j]; token position p lives in slot
// block_tables[s][p / block_size] * block_size + p % block_size.
struct AttentionMetadata {
  int num_tokens = 0;
  int num_seqs = 0;
  const int32_t* query_start_loc = nullptr;  // [num_seqs + 1]
  const int32_t* seq_lens = nullptr;         // [num_seqs]
  const int32_t* block_tables = nullptr;     // [num_seqs, max_blocks_per_seq]
  int max_blocks_per_seq = 0;
  // [num_tokens]: cache slot for each new token, each in [0, num_blocks * block_size): the
  // backends refuse anything else. (A replayed CUDA graph may see -1, a padding row that
  // writes nothing: its host checks ran at capture, and its kernels skip such slots.)
  const int64_t* slot_mapping = nullptr;
};

// One row of on-device sampling: the host Sampler's processors, filters and draw for a row
// whose processors are all logit edits, and its raw logprobs when it asks for at most
// kMaxDeviceLogprobs top tokens (runner/device_sampling.h decides).
struct SampleRowSpec {
  int32_t logit_row = 0;     // row of the logits tensor
  int32_t greedy = 0;        // nonzero: argmax, lowest id on ties
  float temperature = 1.0f;  // effective temperature (> 0) when not greedy
  int32_t top_k = 0;         // <= 0: off
  float top_p = 1.0f;        // 1: off
  float min_p = 0.0f;        // 0: off
  double uniform = 0.0;      // the row's draw in [0, 1), from its Rng
  // The row's processors: edits[edits_begin, edits_end) of sample()'s edits, at most one per
  // token (sample/logit_edits.h builds them), with the row's penalty values.
  int32_t edits_begin = 0;
  int32_t edits_end = 0;
  RowPenalties penalties;
  int32_t num_logprobs = -1;  // >= 0: sample() returns the row's logprobs with this many top tokens
};

// What fused_matmul does around its product.
enum class GatedActivation { None, Silu, GeluTanh };
struct MatmulFusion {
  const Tensor* norm = nullptr;  // the product's input is rms_norm(x) with this weight ([k] F32)
  float eps = 0.0f;              // and this epsilon
  // w stacks a gate and an up projection ([2d, k]): out [n, d] = act(x . gate^T) * (x . up^T).
  GatedActivation gated = GatedActivation::None;
  bool accumulate = false;  // out += the result (the residual add), instead of out = it
};

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string name() const = 0;

  // Zero-filled memory owned by this backend.
  [[nodiscard]] virtual Tensor alloc(DType dtype, Shape shape) = 0;
  // Memory owned by this backend whose contents are unspecified: for buffers an op is about
  // to overwrite whole (a GPU backend saves the fill).
  [[nodiscard]] virtual Tensor scratch(DType dtype, Shape shape) { return alloc(dtype, std::move(shape)); }
  // Makes a weight usable by this backend (the CPU uses the host memory as it is; the CUDA
  // backend keeps matrices as BF16 and vectors as F32).
  [[nodiscard]] virtual Tensor upload(const Tensor& host) = 0;
  // Whether upload() and upload_stacked() copy (the host memory is not needed afterwards)
  // rather than use the host memory in place.
  [[nodiscard]] virtual bool upload_copies() const { return false; }
  // Whether the model should stack the projections that read one input (q, k, v; gate, up)
  // into one weight each: one wide matmul instead of two or three narrow ones, which a GPU
  // runs nearer its bandwidth. $PAGODA_STACK_PROJECTIONS=0|1 overrides (decoder.cpp).
  [[nodiscard]] virtual bool stacks_projections() const { return false; }
  // upload() of the parts stacked along their first dimension: [sum of rows, cols] for
  // matrices of one width, [sum of sizes] for vectors. nullopt where this backend cannot
  // stack these parts (the CPU keeps weights in their file's dtype, so they must share it).
  [[nodiscard]] virtual std::optional<Tensor> upload_stacked(std::span<const Tensor* const> parts) = 0;
  // Copies a backend tensor's contents to host memory (F32 only). Waits for pending work.
  virtual void download(const Tensor& src, float* dst) = 0;
  // Fills a backend tensor (F32) from host memory holding dst.numel() floats.
  virtual void copy_from_host(const float* src, Tensor& dst) = 0;

  // Device memory, for backends that have their own (sizing the KV cache); none on the CPU.
  struct MemoryInfo {
    size_t free_bytes = 0;
    size_t total_bytes = 0;
  };
  [[nodiscard]] virtual std::optional<MemoryInfo> memory_info() const { return std::nullopt; }

  // Whether sample() works here. The CPU backend has no device sampler: its logits are
  // already host memory, where the host Sampler reads them in place.
  [[nodiscard]] virtual bool can_sample() const { return false; }
  // ids[i] = one token drawn from logits row rows[i].logit_row ([rows, vocab] F32) after
  // rows[i]'s edits (applied to that row in place, as apply_logit_edits does) with rows[i]'s
  // filters: temperature, min_p, top_k, top_p (the host Sampler's survivors), then an
  // inverse-CDF walk in token-id order with rows[i].uniform. ids[i] = -1 for a row the host
  // must sample (a NaN or +inf logit, or no finite logit, after the edits): its logits row
  // then already carries its processors. Only the ids come back, and logprobs[i] for each
  // sampled row with num_logprobs >= 0 (logprobs: one entry a row; may be null when no row
  // asks): the logprobs of the logits as they were before the edits (the host Sampler's
  // LogprobsMode::kRaw). A row with logprobs is also handed back for a NaN or +inf logit, or
  // no finite one, before the edits, and then comes back unedited.
  virtual void sample(const Tensor& /*logits*/, std::span<const SampleRowSpec> /*rows*/,
                      std::span<const LogitEdit> /*edits*/, int32_t* /*ids*/,
                      DeviceLogprobs* /*logprobs*/ = nullptr) {
    fail("backend ", name(), " cannot sample on its device");
  }

  // Sampling ahead (async scheduling): sample_async queues what sample() does, for rows that
  // ask for no logprobs, and returns at once. The ids stay on the device: until the next
  // sample_async, embedding() given the placeholder id -(r + 1) reads row r's id there (a
  // handed-back row's as 0). collect_sampled waits for the oldest sample_async not yet
  // collected and writes its ids (-1: handed back; its logits are not kept). At most two
  // may be outstanding.
  [[nodiscard]] virtual bool can_sample_async() const { return false; }
  virtual void sample_async(const Tensor& /*logits*/, std::span<const SampleRowSpec> /*rows*/,
                            std::span<const LogitEdit> /*edits*/) {
    fail("backend ", name(), " cannot sample asynchronously");
  }
  virtual void collect_sampled(int32_t* /*ids*/) { fail("backend ", name(), " cannot sample asynchronously"); }

  // Graphs (CUDA graphs): between begin_capture and end_capture the ops are recorded, not
  // run; replay(graph) runs the recording again. `inputs` are the host arrays whose contents
  // change from one replay to the next (a step's token ids, positions, metadata): replay
  // copies them again first, from the same addresses, so they must stay allocated and keep
  // their size. Any other host array an op reads is recorded as it was. Memory a recorded
  // op allocates keeps its address across replays, but not its contents: graphs may share
  // it, so read a replay's outputs before the next replay of any graph. After an Error
  // during capture, call abort_capture. Backends without graphs return false from
  // can_capture. An input with row_bytes > 0 is a table of rows of that many bytes (block
  // tables): a replay given live_row_bytes copies only that prefix of each row, for the ops
  // read no further (0: whole rows).
  struct HostSpan {
    const void* data = nullptr;
    size_t bytes = 0;
    size_t row_bytes = 0;
  };
  [[nodiscard]] virtual bool can_capture() const { return false; }
  virtual void begin_capture(std::span<const HostSpan> /*inputs*/) { fail("backend ", name(), " has no graphs"); }
  [[nodiscard]] virtual int end_capture() { fail("backend ", name(), " has no graphs"); }
  virtual void abort_capture() {}
  virtual void replay(int /*graph*/, size_t /*live_row_bytes*/ = 0) { fail("backend ", name(), " has no graphs"); }
  // Frees a graph (its id is not reused).
  virtual void release_graph(int /*graph*/) {}

  // out[i] = table[ids[i]] as F32. table: [vocab, dim] in any dtype; out: [n, dim].
  // An id outside [0, vocab) is an Error, but for the placeholders of sample_async.
  virtual void embedding(const Tensor& table, const int32_t* ids, int n, Tensor& out) = 0;
  // out = x / rms(x) * weight, per row of x ([rows, dim]); weight: [dim] F32. out may be x.
  virtual void rms_norm(const Tensor& x, const Tensor& weight, float eps, Tensor& out) = 0;
  // out = x @ w^T. x: [n, k] F32; w: [m, k] any dtype (k whole blocks); out: [n, m] F32,
  // not aliasing x.
  virtual void matmul(const Tensor& x, const Tensor& w, Tensor& out) = 0;
  // A block's matmul with the ops a decoder runs around it: out = (norm(x) or x) @ w^T, gated
  // and accumulated as fusion says (MatmulFusion). x: [n, k] F32; w as for matmul; out: [n, m],
  // or [n, m / 2] gated, not aliasing x. The default runs the ops one after the other; the
  // CUDA backend fuses them into its decode GEMV, where each would be a kernel of its own.
  virtual void fused_matmul(const Tensor& x, const MatmulFusion& fusion, const Tensor& w, Tensor& out);
  // A hint that w (a weight) is read by a matmul right after an attention over `before` (a
  // batch's metadata, on k_cache and its v): the backend may start moving w closer to the
  // cores while that attention leaves the memory bus idle. Changes no result. The CUDA
  // backend pulls it into L2 for small batches over short contexts; the default does nothing.
  virtual void prefetch(const Tensor& /*w*/, const AttentionMetadata& /*before*/, const Tensor& /*k_cache*/) {}
  // x[i, :] += bias. x: [n, m]; bias: [m] F32.
  virtual void add_bias(Tensor& x, const Tensor& bias) = 0;
  // x += y, same shape.
  virtual void add(Tensor& x, const Tensor& y) = 0;
  // x *= s.
  virtual void scale(Tensor& x, float s) = 0;
  // x = cap * tanh(x / cap) (logit softcapping), cap > 0.
  virtual void softcap(Tensor& x, float cap) = 0;
  // out = silu(gate) * up, and out = gelu_tanh(gate) * up. All [n, d]; out may be gate.
  virtual void silu_mul(const Tensor& gate, const Tensor& up, Tensor& out) = 0;
  virtual void gelu_mul(const Tensor& gate, const Tensor& up, Tensor& out) = 0;
  // The same from a stacked gate/up projection: gate_up [n, 2d] holds gate in its first d
  // columns and up in its last d; out: [n, d].
  virtual void silu_mul_stacked(const Tensor& gate_up, Tensor& out) = 0;
  virtual void gelu_mul_stacked(const Tensor& gate_up, Tensor& out) = 0;
  // Splits the columns of x [n, sum of widths] (a stacked q/k/v projection's output) into
  // parts [n, width_i], in order. F32.
  virtual void split_columns(const Tensor& x, std::span<Tensor* const> parts) = 0;
  // Rotates x: [num_tokens, num_heads, head_dim] in place; positions: [num_tokens].
  virtual void rope(Tensor& x, const int32_t* positions, const RopeConfig& config) = 0;

  // The dtype of the KV cache tensors this backend's write_kv and paged_attention take.
  [[nodiscard]] virtual DType kv_cache_dtype() const { return DType::F32; }
  // Writes the new tokens' keys and values ([num_tokens, kv_heads, head_dim]) into the
  // caches ([num_blocks, block_size, kv_heads, head_dim]) at meta.slot_mapping.
  virtual void write_kv(const Tensor& k, const Tensor& v, Tensor& k_cache, Tensor& v_cache,
                        const AttentionMetadata& meta) = 0;
  // Causal attention of each new token over its sequence's cached context (which
  // write_kv has already extended). q, out: [num_tokens, num_heads, head_dim]; num_heads a
  // multiple of kv_heads (GQA). sliding_window > 0 limits a query at position p to keys at
  // positions > p - sliding_window. softcap > 0 applies softcap * tanh(score / softcap).
  virtual void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                               const AttentionMetadata& meta, float scale, int sliding_window,
                               float softcap, Tensor& out) = 0;

  // A layer's attention inputs from its stacked q/k/v projection qkv [num_tokens,
  // (num_heads + 2 kv_heads) * head_dim]: q and k are normed per head when norms.q / norms.k
  // are set (Qwen3, Gemma 3), rotated, q written to q_out [num_tokens, num_heads, head_dim]
  // and k, v into the caches at meta.slot_mapping. split_columns, rms_norm, rope and
  // write_kv in one pass; this default composes them.
  virtual void split_rope_write_kv(const Tensor& qkv, const HeadNorms& norms, const int32_t* positions,
                                   const RopeConfig& rotary, Tensor& q_out, Tensor& k_cache, Tensor& v_cache,
                                   const AttentionMetadata& meta);
  // A layer's attention from its stacked projection: split_rope_write_kv into q_scratch, then
  // paged_attention of that q into out. A backend may do both in one pass (CUDA, for batches
  // of decodes), leaving q_scratch unwritten; this default composes them.
  virtual void attend_from_qkv(const Tensor& qkv, const HeadNorms& norms, const int32_t* positions,
                               const RopeConfig& rotary, Tensor& q_scratch, Tensor& k_cache, Tensor& v_cache,
                               const AttentionMetadata& meta, float scale, int sliding_window, float softcap,
                               Tensor& out);
};

// The CPU backend with num_threads worker threads (0: one per hardware thread).
std::unique_ptr<Backend> make_cpu_backend(int num_threads = 0);

// The backend for a --device value: "cpu", "cuda" (the first GPU; an Error when this build
// has no CUDA backend or no GPU is present) or "auto" (cuda when a GPU is present).
std::unique_ptr<Backend> make_backend(const std::string& device, int num_threads = 0);
// Number of usable CUDA GPUs; 0 in a build without the CUDA backend.
[[nodiscard]] int cuda_device_count();

}  // namespace pagoda
