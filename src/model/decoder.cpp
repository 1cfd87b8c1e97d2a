#include "model/decoder.h"

#include <cmath>
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

}  // namespace

const Tensor& Decoder::uploaded(const Tensor& host) {
  device_weights_.push_back(backend_.upload(host));
  return device_weights_.back();
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

  // Pointers into device_weights_ must stay valid: reserve for every tensor up front.
  device_weights_.reserve(loaded.weights.all().size());
  const WeightMap& w = loaded.weights;
  const int64_t hidden = s.hidden_size;
  const int64_t q_rows = int64_t{s.num_heads} * s.head_dim;
  const int64_t kv_rows = int64_t{s.num_kv_heads} * s.head_dim;
  auto required = [&](const std::string& name, const Shape& shape) {
    const Tensor& t = w.get(name);
    expect_shape(t, shape, name);
    return &uploaded(t);
  };
  auto optional = [&](bool wanted, const std::string& name, const Shape& shape) -> const Tensor* {
    if (!wanted) return nullptr;
    return required(name, shape);
  };

  token_embd_ = required("token_embd.weight", {s.vocab_size, hidden});
  output_norm_ = required("output_norm.weight", {hidden});
  output_ = w.find("output.weight") != nullptr ? required("output.weight", {s.vocab_size, hidden})
                                                : token_embd_;
  for (int l = 0; l < s.num_layers; ++l) {
    LayerWeights lw;
    lw.attn_norm = required(layer_name(l, "attn_norm.weight"), {hidden});
    lw.q = required(layer_name(l, "attn_q.weight"), {q_rows, hidden});
    lw.k = required(layer_name(l, "attn_k.weight"), {kv_rows, hidden});
    lw.v = required(layer_name(l, "attn_v.weight"), {kv_rows, hidden});
    lw.o = required(layer_name(l, "attn_output.weight"), {hidden, q_rows});
    lw.q_bias = optional(s.attention_bias, layer_name(l, "attn_q.bias"), {q_rows});
    lw.k_bias = optional(s.attention_bias, layer_name(l, "attn_k.bias"), {kv_rows});
    lw.v_bias = optional(s.attention_bias, layer_name(l, "attn_v.bias"), {kv_rows});
    lw.q_norm = optional(s.qk_norm, layer_name(l, "attn_q_norm.weight"), {s.head_dim});
    lw.k_norm = optional(s.qk_norm, layer_name(l, "attn_k_norm.weight"), {s.head_dim});
    lw.post_attention_norm =
        optional(s.sandwich_norms, layer_name(l, "post_attention_norm.weight"), {hidden});
    lw.ffn_norm = required(layer_name(l, "ffn_norm.weight"), {hidden});
    lw.gate = required(layer_name(l, "ffn_gate.weight"), {s.intermediate_size, hidden});
    lw.up = required(layer_name(l, "ffn_up.weight"), {s.intermediate_size, hidden});
    lw.down = required(layer_name(l, "ffn_down.weight"), {hidden, s.intermediate_size});
    lw.post_ffw_norm = optional(s.sandwich_norms, layer_name(l, "post_ffw_norm.weight"), {hidden});
    layers_.push_back(lw);
  }
}

void Decoder::attention_block(int layer, const ForwardBatch& batch, KvCache& cache, Tensor& x) {
  const ModelSpec& s = spec_;
  const LayerWeights& lw = layers_[static_cast<size_t>(layer)];
  const AttentionType& type = attention_types_[static_cast<size_t>(layer_type_[static_cast<size_t>(layer)])];
  const int64_t n = x.dim(0);

  Tensor h = backend_.scratch(DType::F32, x.shape());
  backend_.rms_norm(x, *lw.attn_norm, s.rms_norm_eps, h);
  Tensor q = backend_.scratch(DType::F32, {n, int64_t{s.num_heads} * s.head_dim});
  Tensor k = backend_.scratch(DType::F32, {n, int64_t{s.num_kv_heads} * s.head_dim});
  Tensor v = backend_.scratch(DType::F32, {n, int64_t{s.num_kv_heads} * s.head_dim});
  backend_.matmul(h, *lw.q, q);
  backend_.matmul(h, *lw.k, k);
  backend_.matmul(h, *lw.v, v);
  if (lw.q_bias != nullptr) {
    backend_.add_bias(q, *lw.q_bias);
    backend_.add_bias(k, *lw.k_bias);
    backend_.add_bias(v, *lw.v_bias);
  }
  Tensor q_heads = q.reshape({n, s.num_heads, s.head_dim});
  Tensor k_heads = k.reshape({n, s.num_kv_heads, s.head_dim});
  Tensor v_heads = v.reshape({n, s.num_kv_heads, s.head_dim});
  if (lw.q_norm != nullptr) {
    Tensor q_rows = q.reshape({n * s.num_heads, s.head_dim});
    Tensor k_rows = k.reshape({n * s.num_kv_heads, s.head_dim});
    backend_.rms_norm(q_rows, *lw.q_norm, s.rms_norm_eps, q_rows);
    backend_.rms_norm(k_rows, *lw.k_norm, s.rms_norm_eps, k_rows);
  }
  backend_.rope(q_heads, batch.positions.data(), type.rope);
  backend_.rope(k_heads, batch.positions.data(), type.rope);
  backend_.write_kv(k_heads, v_heads, cache.k(layer), cache.v(layer), batch.attention);

  Tensor attn = backend_.scratch(DType::F32, {n, s.num_heads, s.head_dim});
  backend_.paged_attention(q_heads, cache.k(layer), cache.v(layer), batch.attention,
                           s.attention_scale(), type.sliding_window, type.softcap, attn);
  Tensor o = backend_.scratch(DType::F32, x.shape());
  backend_.matmul(attn.reshape({n, int64_t{s.num_heads} * s.head_dim}), *lw.o, o);
  if (lw.post_attention_norm != nullptr) backend_.rms_norm(o, *lw.post_attention_norm, s.rms_norm_eps, o);
  backend_.add(x, o);
}

void Decoder::mlp_block(int layer, Tensor& x) {
  const ModelSpec& s = spec_;
  const LayerWeights& lw = layers_[static_cast<size_t>(layer)];
  const int64_t n = x.dim(0);
  Tensor h = backend_.scratch(DType::F32, x.shape());
  backend_.rms_norm(x, *lw.ffn_norm, s.rms_norm_eps, h);
  Tensor gate = backend_.scratch(DType::F32, {n, s.intermediate_size});
  Tensor up = backend_.scratch(DType::F32, {n, s.intermediate_size});
  backend_.matmul(h, *lw.gate, gate);
  backend_.matmul(h, *lw.up, up);
  if (s.activation == Activation::GeluTanh) {
    backend_.gelu_mul(gate, up, gate);
  } else {
    backend_.silu_mul(gate, up, gate);
  }
  Tensor down = backend_.scratch(DType::F32, x.shape());
  backend_.matmul(gate, *lw.down, down);
  if (lw.post_ffw_norm != nullptr) backend_.rms_norm(down, *lw.post_ffw_norm, s.rms_norm_eps, down);
  backend_.add(x, down);
}

Tensor Decoder::forward(const ForwardBatch& batch, KvCache& cache) {
  const ModelSpec& s = spec_;
  const int n = static_cast<int>(batch.token_ids.size());
  PAGODA_CHECK(n > 0 && batch.positions.size() == batch.token_ids.size());
  PAGODA_CHECK(batch.attention.num_tokens == n);
  for (int32_t id : batch.token_ids) {
    if (id < 0 || id >= s.vocab_size) fail("token id ", id, " outside the vocabulary of ", s.vocab_size);
  }

  Tensor x = backend_.scratch(DType::F32, {n, s.hidden_size});
  backend_.embedding(*token_embd_, batch.token_ids.data(), n, x);
  if (s.embed_scale) backend_.scale(x, std::sqrt(static_cast<float>(s.hidden_size)));
  for (int l = 0; l < s.num_layers; ++l) {
    attention_block(l, batch, cache, x);
    mlp_block(l, x);
  }

  // Only the rows whose logits are wanted go through the final norm and the vocabulary
  // projection (for a prefill that is usually one row of many). embedding() gathers rows.
  const int rows = static_cast<int>(batch.logit_rows.size());
  for (int32_t r : batch.logit_rows) PAGODA_CHECK(0 <= r && r < n);
  Tensor picked = backend_.scratch(DType::F32, {rows, s.hidden_size});
  backend_.embedding(x, batch.logit_rows.data(), rows, picked);
  backend_.rms_norm(picked, *output_norm_, s.rms_norm_eps, picked);
  Tensor logits = backend_.scratch(DType::F32, {rows, s.vocab_size});
  backend_.matmul(picked, *output_, logits);
  if (s.final_logit_softcap > 0) backend_.softcap(logits, s.final_logit_softcap);
  return logits;
}

}  // namespace pagoda
