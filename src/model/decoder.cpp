#include "model/decoder.h"

#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>

namespace pagoda {

namespace {

std::string layer_name(int layer, const char* tensor) {
  return "blk." + std::to_string(layer) + "." + tensor;
}

void expect_shape(const Tensor& t, const Shape& shape, const std::string& name) {
  if (t.shape() != shape) {
    fail("tensor ", name, " has shape ", shape_string(t.shape()), ", expected ", shape_string(shape));
  }
}

// $PAGODA_STACK_PROJECTIONS=0|1 overrides the backend's choice (tests compare the two).
bool stack_projections(const Backend& backend) {
  const char* env = std::getenv("PAGODA_STACK_PROJECTIONS");
  if (env != nullptr && *env != '\0') return std::string(env) != "0";
  return backend.stacks_projections();
}

}  // namespace

const Tensor& Decoder::uploaded(const Tensor& host, const WeightMap& weights) {
  device_weights_.push_back(backend_.upload(host));
  if (backend_.upload_copies()) weights.release_pages(host);
  return device_weights_.back();
}

const Tensor* Decoder::uploaded_stacked(std::span<const Tensor* const> parts, const WeightMap& weights) {
  std::optional<Tensor> t = backend_.upload_stacked(parts);
  if (!t) return nullptr;
  device_weights_.push_back(std::move(*t));
  if (backend_.upload_copies()) {
    for (const Tensor* p : parts) weights.release_pages(*p);
  }
  ++stacked_weights_;
  return &device_weights_.back();
}

Decoder::Decoder(const LoadedModel& loaded, Backend& backend,
                 std::vector<AttentionType> attention_types, std::vector<int> layer_type)
    : spec_(loaded.spec),
      backend_(backend),
      attention_types_(std::move(attention_types)),
      layer_type_(std::move(layer_type)) {
  const ModelSpec& s = spec_;
  PAGODA_CHECK(static_cast<int>(layer_type_.size()) == s.num_layers);
  for (AttentionType& t : attention_types_) t.rope.inv_freq = t.inv_freq.data();

  const WeightMap& w = loaded.weights;
  const int64_t hidden = s.hidden_size;
  const int64_t q_rows = int64_t{s.num_heads} * s.head_dim;
  const int64_t kv_rows = int64_t{s.num_kv_heads} * s.head_dim;
  auto checked = [&](const std::string& name, const Shape& shape) -> const Tensor& {
    const Tensor& t = w.get(name);
    expect_shape(t, shape, name);
    return t;
  };
  auto upload = [&](const Tensor& t) { return &uploaded(t, w); };
  auto required = [&](const std::string& name, const Shape& shape) { return upload(checked(name, shape)); };
  auto optional = [&](bool wanted, const std::string& name, const Shape& shape) -> const Tensor* {
    if (!wanted) return nullptr;
    return required(name, shape);
  };
  // The stacked weight of parts, or null where the backend cannot stack them.
  auto stacked = [&](std::initializer_list<const Tensor*> parts) {
    return uploaded_stacked(std::span<const Tensor* const>(parts.begin(), parts.size()), w);
  };
  const bool stack = stack_projections(backend_);

  token_embd_ = required("token_embd.weight", {s.vocab_size, hidden});
  output_norm_ = required("output_norm.weight", {hidden});
  output_ = w.find("output.weight") != nullptr ? required("output.weight", {s.vocab_size, hidden})
                                                : token_embd_;
  for (int l = 0; l < s.num_layers; ++l) {
    LayerWeights lw;
    lw.attn_norm = required(layer_name(l, "attn_norm.weight"), {hidden});
    const Tensor& q = checked(layer_name(l, "attn_q.weight"), {q_rows, hidden});
    const Tensor& k = checked(layer_name(l, "attn_k.weight"), {kv_rows, hidden});
    const Tensor& v = checked(layer_name(l, "attn_v.weight"), {kv_rows, hidden});
    if (stack) lw.qkv = stacked({&q, &k, &v});
    if (lw.qkv == nullptr) {
      lw.q = upload(q);
      lw.k = upload(k);
      lw.v = upload(v);
    }
    lw.o = required(layer_name(l, "attn_output.weight"), {hidden, q_rows});
    if (s.attention_bias) {
      const Tensor& qb = checked(layer_name(l, "attn_q.bias"), {q_rows});
      const Tensor& kb = checked(layer_name(l, "attn_k.bias"), {kv_rows});
      const Tensor& vb = checked(layer_name(l, "attn_v.bias"), {kv_rows});
      if (lw.qkv != nullptr) lw.qkv_bias = stacked({&qb, &kb, &vb});
      if (lw.qkv_bias == nullptr) {
        if (lw.qkv != nullptr) fail("layer ", l, ": the q/k/v biases do not stack like their weights");
        lw.q_bias = upload(qb);
        lw.k_bias = upload(kb);
        lw.v_bias = upload(vb);
      }
    }
    lw.q_norm = optional(s.qk_norm, layer_name(l, "attn_q_norm.weight"), {s.head_dim});
    lw.k_norm = optional(s.qk_norm, layer_name(l, "attn_k_norm.weight"), {s.head_dim});
    lw.post_attention_norm =
        optional(s.sandwich_norms, layer_name(l, "post_attention_norm.weight"), {hidden});
    lw.ffn_norm = required(layer_name(l, "ffn_norm.weight"), {hidden});
    const Tensor& gate = checked(layer_name(l, "ffn_gate.weight"), {s.intermediate_size, hidden});
    const Tensor& up = checked(layer_name(l, "ffn_up.weight"), {s.intermediate_size, hidden});
    if (stack) lw.gate_up = stacked({&gate, &up});
    if (lw.gate_up == nullptr) {
      lw.gate = upload(gate);
      lw.up = upload(up);
    }
    lw.down = required(layer_name(l, "ffn_down.weight"), {hidden, s.intermediate_size});
    lw.post_ffw_norm = optional(s.sandwich_norms, layer_name(l, "post_ffw_norm.weight"), {hidden});
    layers_.push_back(lw);
  }
}

void Decoder::stacked_attention(int layer, const ForwardBatch& batch, KvCache& cache, const Tensor& x, Tensor& attn) {
  const ModelSpec& s = spec_;
  const LayerWeights& lw = layers_[static_cast<size_t>(layer)];
  const AttentionType& type = attention_types_[static_cast<size_t>(layer_type_[static_cast<size_t>(layer)])];
  const int64_t n = x.dim(0);
  Tensor qkv = backend_.scratch(DType::F32, {n, int64_t{s.num_heads + 2 * s.num_kv_heads} * s.head_dim});
  MatmulFusion normed_input;
  normed_input.norm = lw.attn_norm;
  normed_input.eps = s.rms_norm_eps;
  backend_.fused_matmul(x, normed_input, *lw.qkv, qkv);
  // The o projection comes after the attention, which may leave the memory bus idle.
  backend_.prefetch(*lw.o, batch.attention, cache.k(layer));
  if (lw.qkv_bias != nullptr) backend_.add_bias(qkv, *lw.qkv_bias);
  const HeadNorms norms{lw.q_norm, lw.k_norm, s.rms_norm_eps};
  Tensor q = backend_.scratch(DType::F32, {n, s.num_heads, s.head_dim});
  backend_.attend_from_qkv(qkv, norms, batch.positions.data(), type.rope, q, cache.k(layer), cache.v(layer),
                           batch.attention, s.attention_scale(), type.sliding_window, type.softcap, attn);
}

void Decoder::separate_attention(int layer, const ForwardBatch& batch, KvCache& cache, const Tensor& x,
                                 Tensor& attn) {
  const ModelSpec& s = spec_;
  const LayerWeights& lw = layers_[static_cast<size_t>(layer)];
  const AttentionType& type = attention_types_[static_cast<size_t>(layer_type_[static_cast<size_t>(layer)])];
  const int64_t n = x.dim(0);
  const int64_t q_width = int64_t{s.num_heads} * s.head_dim, kv_width = int64_t{s.num_kv_heads} * s.head_dim;
  Tensor q = backend_.scratch(DType::F32, {n, s.num_heads, s.head_dim});
  const Tensor h = normed(x, *lw.attn_norm);
  Tensor q_rows = q.reshape({n, q_width});
  Tensor k = backend_.scratch(DType::F32, {n, kv_width});
  Tensor v = backend_.scratch(DType::F32, {n, kv_width});
  backend_.matmul(h, *lw.q, q_rows);
  backend_.matmul(h, *lw.k, k);
  backend_.matmul(h, *lw.v, v);
  if (lw.q_bias != nullptr) {
    backend_.add_bias(q_rows, *lw.q_bias);
    backend_.add_bias(k, *lw.k_bias);
    backend_.add_bias(v, *lw.v_bias);
  }
  Tensor k_heads = k.reshape({n, s.num_kv_heads, s.head_dim});
  if (lw.q_norm != nullptr) {
    Tensor q_head_rows = q.reshape({n * s.num_heads, s.head_dim});
    Tensor k_head_rows = k.reshape({n * s.num_kv_heads, s.head_dim});
    backend_.rms_norm(q_head_rows, *lw.q_norm, s.rms_norm_eps, q_head_rows);
    backend_.rms_norm(k_head_rows, *lw.k_norm, s.rms_norm_eps, k_head_rows);
  }
  backend_.rope(q, batch.positions.data(), type.rope);
  backend_.rope(k_heads, batch.positions.data(), type.rope);
  backend_.write_kv(k_heads, v.reshape({n, s.num_kv_heads, s.head_dim}), cache.k(layer), cache.v(layer),
                    batch.attention);
  backend_.paged_attention(q, cache.k(layer), cache.v(layer), batch.attention, s.attention_scale(),
                           type.sliding_window, type.softcap, attn);
}

void Decoder::attention_block(int layer, const ForwardBatch& batch, KvCache& cache, Tensor& x) {
  const ModelSpec& s = spec_;
  const LayerWeights& lw = layers_[static_cast<size_t>(layer)];
  const int64_t n = x.dim(0);
  Tensor attn = backend_.scratch(DType::F32, {n, s.num_heads, s.head_dim});
  if (lw.qkv != nullptr) {
    stacked_attention(layer, batch, cache, x, attn);
  } else {
    separate_attention(layer, batch, cache, x, attn);
  }
  add_projection(attn.reshape({n, int64_t{s.num_heads} * s.head_dim}), *lw.o, lw.post_attention_norm, x);
}

void Decoder::mlp_block(int layer, Tensor& x) {
  const ModelSpec& s = spec_;
  const LayerWeights& lw = layers_[static_cast<size_t>(layer)];
  const int64_t n = x.dim(0);
  Tensor activated = backend_.scratch(DType::F32, {n, s.intermediate_size});
  const bool gelu = s.activation == Activation::GeluTanh;
  if (lw.gate_up != nullptr) {
    MatmulFusion normed_gated;
    normed_gated.norm = lw.ffn_norm;
    normed_gated.eps = s.rms_norm_eps;
    normed_gated.gated = gelu ? GatedActivation::GeluTanh : GatedActivation::Silu;
    backend_.fused_matmul(x, normed_gated, *lw.gate_up, activated);
  } else {
    const Tensor h = normed(x, *lw.ffn_norm);
    Tensor up = backend_.scratch(DType::F32, {n, s.intermediate_size});
    backend_.matmul(h, *lw.gate, activated);
    backend_.matmul(h, *lw.up, up);
    if (gelu) {
      backend_.gelu_mul(activated, up, activated);
    } else {
      backend_.silu_mul(activated, up, activated);
    }
  }
  add_projection(activated, *lw.down, lw.post_ffw_norm, x);
}

Tensor Decoder::normed(const Tensor& x, const Tensor& weight) {
  Tensor h = backend_.scratch(DType::F32, x.shape());
  backend_.rms_norm(x, weight, spec_.rms_norm_eps, h);
  return h;
}

void Decoder::add_projection(const Tensor& input, const Tensor& w, const Tensor* post_norm, Tensor& x) {
  if (post_norm == nullptr) {
    MatmulFusion residual_add;
    residual_add.accumulate = true;
    backend_.fused_matmul(input, residual_add, w, x);
    return;
  }
  Tensor projected = backend_.scratch(DType::F32, x.shape());
  backend_.matmul(input, w, projected);
  backend_.rms_norm(projected, *post_norm, spec_.rms_norm_eps, projected);
  backend_.add(x, projected);
}

Tensor Decoder::forward(const ForwardBatch& batch, KvCache& cache) {
  const ModelSpec& s = spec_;
  const int n = static_cast<int>(batch.token_ids.size());
  PAGODA_CHECK(n > 0 && batch.positions.size() == batch.token_ids.size());
  PAGODA_CHECK(batch.attention.num_tokens == n);
  // A negative id is a placeholder for a token sampled ahead, which embedding() checks.
  const bool placeholders = backend_.can_sample_async();
  for (int32_t id : batch.token_ids) {
    if ((id < 0 && !placeholders) || id >= s.vocab_size) fail("token id ", id, " outside the vocabulary of ", s.vocab_size);
  }

  Tensor x = backend_.scratch(DType::F32, {n, s.hidden_size});  // the residual stream
  backend_.embedding(*token_embd_, batch.token_ids.data(), n, x);
  if (s.embed_scale) backend_.scale(x, std::sqrt(static_cast<float>(s.hidden_size)));
  for (int l = 0; l < s.num_layers; ++l) {
    attention_block(l, batch, cache, x);
    mlp_block(l, x);
  }

  // Only the rows whose logits are wanted go through the final norm and the vocabulary
  // projection (for a prefill that is usually one row of many). embedding() gathers rows;
  // a batch of decodes wants every row in order, and the norm reads them where they are.
  const int rows = static_cast<int>(batch.logit_rows.size());
  bool every_row = rows == n;
  for (int i = 0; i < rows; ++i) {
    const int32_t r = batch.logit_rows[static_cast<size_t>(i)];
    PAGODA_CHECK(0 <= r && r < n);
    every_row = every_row && r == i;
  }
  Tensor picked = backend_.scratch(DType::F32, {rows, s.hidden_size});
  if (every_row) {
    backend_.rms_norm(x, *output_norm_, s.rms_norm_eps, picked);
  } else {
    backend_.embedding(x, batch.logit_rows.data(), rows, picked);
    backend_.rms_norm(picked, *output_norm_, s.rms_norm_eps, picked);
  }
  Tensor logits = backend_.scratch(DType::F32, {rows, s.vocab_size});
  backend_.matmul(picked, *output_, logits);
  if (s.final_logit_softcap > 0) backend_.softcap(logits, s.final_logit_softcap);
  return logits;
}

}  // namespace pagoda
