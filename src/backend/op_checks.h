// The argument checks every backend makes before an op, so that a bad call is the same
// clear Error on the CPU and on a GPU. Each returns the sizes the op needs.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "backend/backend.h"
#include "core/error.h"

namespace pagoda::op_checks {

inline void require_dtype(const Tensor& t, DType dtype, const char* op, const char* what) {
  if (t.dtype() != dtype) fail(op, ": ", what, " must be ", dtype_name(dtype), ", not ", dtype_name(t.dtype()));
}

inline void require_f32(const Tensor& t, const char* op, const char* what) { require_dtype(t, DType::F32, op, what); }

inline void require_same(const Tensor& a, const Tensor& b, const char* op) {
  if (a.numel() != b.numel()) {
    fail(op, ": shapes ", shape_string(a.shape()), " and ", shape_string(b.shape()), " differ in size");
  }
}

// x is F32 rows of vec's length (rms_norm's weight, add_bias's bias); returns the number of rows.
inline int64_t rows_of(const Tensor& x, const Tensor& vec, const char* op, const char* vec_name) {
  require_f32(x, op, "x");
  require_f32(vec, op, vec_name);
  const int64_t dim = vec.numel();
  if (dim == 0 || x.numel() % dim != 0) {
    fail(op, ": x ", shape_string(x.shape()), " is not rows of ", vec_name, " ", shape_string(vec.shape()));
  }
  return x.numel() / dim;
}

inline void check_gated(const Tensor& gate, const Tensor& up, const Tensor& out, const char* op) {
  require_f32(gate, op, "gate");
  require_f32(up, op, "up");
  require_f32(out, op, "out");
  require_same(gate, up, op);
  require_same(gate, out, op);
}

// gate_up [n, 2d] and out [n, d] F32; returns d.
inline int64_t gated_stacked_width(const Tensor& gate_up, const Tensor& out, const char* op) {
  require_f32(gate_up, op, "gate_up");
  require_f32(out, op, "out");
  if (gate_up.ndim() != 2 || out.ndim() != 2 || gate_up.dim(0) != out.dim(0) || gate_up.dim(1) != 2 * out.dim(1)) {
    fail(op, ": gate_up ", shape_string(gate_up.shape()), " is not [n, 2d] for out ", shape_string(out.shape()));
  }
  return out.dim(1);
}

// fused_matmul's operands: x [n, k] F32, w [m, k], out [n, m] F32 ([n, m / 2] gated, m
// even), norm [k] F32. Returns {n, m}.
inline std::pair<int64_t, int64_t> fused_matmul_shape(const Tensor& x, const MatmulFusion& fusion, const Tensor& w,
                                                      const Tensor& out) {
  require_f32(x, "fused_matmul", "x");
  require_f32(out, "fused_matmul", "out");
  if (x.ndim() != 2 || w.ndim() != 2 || x.dim(1) != w.dim(1)) {
    fail("fused_matmul: x ", shape_string(x.shape()), " does not fit the weight ", shape_string(w.shape()));
  }
  const int64_t n = x.dim(0), m = w.dim(0);
  const bool gated = fusion.gated != GatedActivation::None;
  if (gated && m % 2 != 0) fail("fused_matmul: a gated weight stacks gate and up, so its ", m, " rows must be even");
  const int64_t width = gated ? m / 2 : m;
  if (out.ndim() != 2 || out.dim(0) != n || out.dim(1) != width) {
    fail("fused_matmul: out ", shape_string(out.shape()), " is not [", n, ", ", width, "]");
  }
  if (fusion.norm != nullptr) {
    require_f32(*fusion.norm, "fused_matmul", "the norm weight");
    if (fusion.norm->numel() != x.dim(1)) {
      fail("fused_matmul: the norm weight ", shape_string(fusion.norm->shape()), " does not fit x ",
           shape_string(x.shape()));
    }
  }
  return {n, m};
}

// x [n, sum of widths] and parts [n, width_i], all F32.
inline void check_split_columns(const Tensor& x, std::span<Tensor* const> parts) {
  require_f32(x, "split_columns", "x");
  if (x.ndim() != 2) fail("split_columns: x must be [n, cols], not ", shape_string(x.shape()));
  int64_t cols = 0;
  for (const Tensor* p : parts) {
    require_f32(*p, "split_columns", "a part");
    if (p->ndim() != 2 || p->dim(0) != x.dim(0)) {
      fail("split_columns: part ", shape_string(p->shape()), " does not have the ", x.dim(0), " rows of x");
    }
    cols += p->dim(1);
  }
  if (cols != x.dim(1)) fail("split_columns: the parts' ", cols, " columns are not x's ", x.dim(1));
}

// The shape of upload_stacked's result; parts are all vectors or all matrices of one width.
inline Shape stacked_shape(std::span<const Tensor* const> parts) {
  if (parts.empty()) fail("upload_stacked: no parts");
  const int ndim = parts[0]->ndim();
  if (ndim != 1 && ndim != 2) fail("upload_stacked: parts must be vectors or matrices");
  int64_t rows = 0;
  for (const Tensor* p : parts) {
    if (p->ndim() != ndim || (ndim == 2 && p->dim(1) != parts[0]->dim(1))) {
      fail("upload_stacked: ", shape_string(p->shape()), " does not stack with ", shape_string(parts[0]->shape()));
    }
    rows += p->dim(0);
  }
  return ndim == 1 ? Shape{rows} : Shape{rows, parts[0]->dim(1)};
}

// out = x @ w^T: x [n, k] F32, w [m, k], out [n, m] F32.
struct MatmulShape {
  int64_t n, k, m;
};
inline MatmulShape matmul_shape(const Tensor& x, const Tensor& w, const Tensor& out) {
  require_f32(x, "matmul", "x");
  require_f32(out, "matmul", "out");
  if (w.ndim() != 2) fail("matmul: weight must be 2-d, got ", shape_string(w.shape()));
  const int64_t m = w.dim(0), k = w.dim(1);
  if (k == 0 || x.numel() % k != 0) {
    fail("matmul: x ", shape_string(x.shape()), " does not match weight ", shape_string(w.shape()));
  }
  const int64_t n = x.numel() / k;
  if (out.numel() != n * m) fail("matmul: out ", shape_string(out.shape()), " is not [", n, ", ", m, "]");
  PAGODA_CHECK(out.raw() != x.raw());
  return {n, k, m};
}

// Checks a 2-d table, out's size and every id; returns the row length. Ids -1 down to
// -num_placeholders are placeholders (Backend::sample_async).
inline int64_t embedding_dim(const Tensor& table, const int32_t* ids, int n, const Tensor& out,
                             int num_placeholders = 0) {
  require_f32(out, "embedding", "out");
  if (table.ndim() != 2) fail("embedding: table must be 2-d, got ", shape_string(table.shape()));
  const int64_t vocab = table.dim(0), dim = table.dim(1);
  if (out.numel() != static_cast<int64_t>(n) * dim) {
    fail("embedding: out ", shape_string(out.shape()), " does not hold ", n, " rows of ", dim);
  }
  for (int i = 0; i < n; ++i) {
    if (ids[i] < -num_placeholders || ids[i] >= vocab) fail("embedding: token id ", ids[i], " outside vocabulary of ", vocab);
  }
  return dim;
}

inline void check_rope(const Tensor& x, const RopeConfig& config) {
  require_f32(x, "rope", "x");
  if (x.ndim() != 3) fail("rope: x must be [tokens, heads, head_dim], got ", shape_string(x.shape()));
  if (config.rot_dim <= 0 || config.rot_dim % 2 != 0 || config.rot_dim > x.dim(2) || config.inv_freq == nullptr) {
    fail("rope: rot_dim ", config.rot_dim, " invalid for head_dim ", x.dim(2));
  }
}

// [num_blocks, block_size, kv_heads, head_dim] of a pair of F32 or BF16 caches (the same
// dtype; which dtypes a backend takes is its own check).
struct CacheDims {
  int64_t num_blocks, block_size, kv_heads, head_dim;
  DType dtype;
};
inline CacheDims cache_dims(const Tensor& k_cache, const Tensor& v_cache, const char* op) {
  if (k_cache.dtype() != DType::BF16) require_f32(k_cache, op, "k_cache");
  require_dtype(v_cache, k_cache.dtype(), op, "v_cache");
  if (k_cache.ndim() != 4 || k_cache.shape() != v_cache.shape()) {
    fail(op, ": caches must both be [num_blocks, block_size, kv_heads, head_dim], got ",
         shape_string(k_cache.shape()), " and ", shape_string(v_cache.shape()));
  }
  return {k_cache.dim(0), k_cache.dim(1), k_cache.dim(2), k_cache.dim(3), k_cache.dtype()};
}

inline void check_write_kv(const Tensor& k, const Tensor& v, const AttentionMetadata& meta, const CacheDims& c) {
  require_f32(k, "write_kv", "k");
  require_f32(v, "write_kv", "v");
  const int64_t expected = static_cast<int64_t>(meta.num_tokens) * c.kv_heads * c.head_dim;
  if (k.numel() != expected || v.numel() != expected) {
    fail("write_kv: k ", shape_string(k.shape()), " / v ", shape_string(v.shape()), " are not [", meta.num_tokens,
         ", ", c.kv_heads, ", ", c.head_dim, "]");
  }
}

// Checks q and out against the metadata and the caches; returns the number of query heads.
inline int64_t attention_heads(const Tensor& q, const Tensor& out, const AttentionMetadata& meta, const CacheDims& c) {
  require_f32(q, "paged_attention", "q");
  require_f32(out, "paged_attention", "out");
  require_same(q, out, "paged_attention");
  const int64_t per_token = static_cast<int64_t>(meta.num_tokens) * c.head_dim;
  if (per_token == 0 || q.numel() % per_token != 0) {
    fail("paged_attention: q ", shape_string(q.shape()), " is not [", meta.num_tokens, ", heads, ", c.head_dim, "]");
  }
  const int64_t num_heads = q.numel() / per_token;
  if (num_heads % c.kv_heads != 0) {
    fail("paged_attention: ", num_heads, " query heads are not a multiple of ", c.kv_heads, " kv heads");
  }
  return num_heads;
}

// split_rope_write_kv's arguments: qkv [n, (heads + 2 kv_heads) * head_dim] and q_out
// [n, heads, head_dim] F32 against the caches and metadata; head norms [head_dim] F32.
// Returns the number of query heads.
inline int64_t split_rope_write_kv_heads(const Tensor& qkv, const HeadNorms& norms, const RopeConfig& rotary,
                                         const Tensor& q_out, const AttentionMetadata& meta, const CacheDims& c) {
  const char* op = "split_rope_write_kv";
  require_f32(qkv, op, "qkv");
  check_rope(q_out, rotary);
  const int64_t n = meta.num_tokens, heads = q_out.dim(1);
  if (q_out.dim(0) != n || q_out.dim(2) != c.head_dim || qkv.ndim() != 2 || qkv.dim(0) != n ||
      qkv.dim(1) != (heads + 2 * c.kv_heads) * c.head_dim) {
    fail(op, ": qkv ", shape_string(qkv.shape()), " and q ", shape_string(q_out.shape()), " are not [", n,
         ", (heads + 2 x ", c.kv_heads, ") x ", c.head_dim, "] and [", n, ", heads, ", c.head_dim, "]");
  }
  if (heads % c.kv_heads != 0) fail(op, ": ", heads, " query heads are not a multiple of ", c.kv_heads);
  for (const Tensor* w : {norms.q, norms.k}) {
    if (w != nullptr && (w->dtype() != DType::F32 || w->numel() != c.head_dim)) {
      fail(op, ": a head norm must be [", c.head_dim, "] F32, not ", shape_string(w->shape()));
    }
  }
  return heads;
}

}  // namespace pagoda::op_checks
