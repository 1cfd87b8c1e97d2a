// The Backend methods with a default: fused ops written as the unfused ones they stand for,
// which a backend overrides where fusing pays.
#include "backend/backend.h"

#include "backend/op_checks.h"

namespace pagoda {

void Backend::split_rope_write_kv(const Tensor& qkv, const HeadNorms& norms, const int32_t* positions,
                                  const RopeConfig& rotary, Tensor& q_out, Tensor& k_cache, Tensor& v_cache,
                                  const AttentionMetadata& meta) {
  const op_checks::CacheDims c = op_checks::cache_dims(k_cache, v_cache, "split_rope_write_kv");
  const int64_t heads = op_checks::split_rope_write_kv_heads(qkv, norms, rotary, q_out, meta, c);
  const int64_t n = meta.num_tokens;
  Tensor q = q_out.reshape({n, heads * c.head_dim});
  Tensor k = scratch(DType::F32, {n, c.kv_heads * c.head_dim});
  Tensor v = scratch(DType::F32, {n, c.kv_heads * c.head_dim});
  Tensor* parts[] = {&q, &k, &v};
  split_columns(qkv, parts);
  if (norms.q != nullptr) {
    Tensor rows = q_out.reshape({n * heads, c.head_dim});
    rms_norm(rows, *norms.q, norms.eps, rows);
  }
  if (norms.k != nullptr) {
    Tensor rows = k.reshape({n * c.kv_heads, c.head_dim});
    rms_norm(rows, *norms.k, norms.eps, rows);
  }
  Tensor k_heads = k.reshape({n, c.kv_heads, c.head_dim});
  rope(q_out, positions, rotary);
  rope(k_heads, positions, rotary);
  write_kv(k_heads, v.reshape({n, c.kv_heads, c.head_dim}), k_cache, v_cache, meta);
}

void Backend::attend_from_qkv(const Tensor& qkv, const HeadNorms& norms, const int32_t* positions,
                              const RopeConfig& rotary, Tensor& q_scratch, Tensor& k_cache, Tensor& v_cache,
                              const AttentionMetadata& meta, float scale, int sliding_window, float softcap,
                              Tensor& out) {
  split_rope_write_kv(qkv, norms, positions, rotary, q_scratch, k_cache, v_cache, meta);
  paged_attention(q_scratch, k_cache, v_cache, meta, scale, sliding_window, softcap, out);
}

void Backend::fused_matmul(const Tensor& x, const MatmulFusion& fusion, const Tensor& w, Tensor& out) {
  const auto [n, m] = op_checks::fused_matmul_shape(x, fusion, w, out);
  Tensor input = x;
  if (fusion.norm != nullptr) {
    input = scratch(DType::F32, x.shape());
    rms_norm(x, *fusion.norm, fusion.eps, input);
  }
  const bool gated = fusion.gated != GatedActivation::None;
  Tensor result = gated || fusion.accumulate ? scratch(DType::F32, {n, m}) : out;
  matmul(input, w, result);
  if (gated) {
    Tensor activated = fusion.accumulate ? scratch(DType::F32, {n, m / 2}) : out;
    if (fusion.gated == GatedActivation::Silu) {
      silu_mul_stacked(result, activated);
    } else {
      gelu_mul_stacked(result, activated);
    }
    result = activated;
  }
  if (fusion.accumulate) add(out, result);
}

}  // namespace pagoda
