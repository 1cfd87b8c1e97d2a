// The decoder-only transformer every supported architecture is an instance of:
// embed -> N x (attention block, MLP block) -> final norm -> logits. An architecture file
// (llama.cpp, gemma3.cpp) only decides what differs: the attention type of each layer
// (rope base, sliding window) — everything else is read from the ModelSpec's flags.
#pragma once

#include <deque>
#include <vector>

#include "model/model.h"

namespace pagoda {

// What one layer's attention does besides the weights: its rotary embedding and window.
struct AttentionType {
  std::vector<float> inv_freq;
  RopeConfig rope;  // rope.inv_freq points into inv_freq (set by the decoder)
  int sliding_window = 0;
  float softcap = 0;  // attention-score softcapping; 0: none
};

// One layer's weights; optional ones are null when the architecture lacks them. Where the
// backend stacks projections (Backend::stacks_projections), qkv (with qkv_bias) replaces
// q, k, v (and their biases) and gate_up replaces gate and up; otherwise those are null.
struct LayerWeights {
  const Tensor* attn_norm = nullptr;
  const Tensor* qkv = nullptr;
  const Tensor* qkv_bias = nullptr;
  const Tensor* gate_up = nullptr;
  const Tensor* q = nullptr;
  const Tensor* k = nullptr;
  const Tensor* v = nullptr;
  const Tensor* o = nullptr;
  const Tensor* q_bias = nullptr;
  const Tensor* k_bias = nullptr;
  const Tensor* v_bias = nullptr;
  const Tensor* q_norm = nullptr;
  const Tensor* k_norm = nullptr;
  const Tensor* post_attention_norm = nullptr;
  const Tensor* ffn_norm = nullptr;
  const Tensor* gate = nullptr;
  const Tensor* up = nullptr;
  const Tensor* down = nullptr;
  const Tensor* post_ffw_norm = nullptr;
};

class Decoder : public Model {
 public:
  // attention_types: the distinct kinds; layer_type[i] indexes it for layer i.
  Decoder(const LoadedModel& loaded, Backend& backend, std::vector<AttentionType> attention_types,
          std::vector<int> layer_type);

  [[nodiscard]] const ModelSpec& spec() const override { return spec_; }
  [[nodiscard]] Tensor forward(const ForwardBatch& batch, KvCache& cache) override;
  // How many weights were uploaded stacked (qkv, its bias, gate_up), for tests.
  [[nodiscard]] int stacked_weights() const { return stacked_weights_; }

 private:
  // Each block adds its output to the residual stream x ([n, hidden]); it norms x itself, in
  // its first matmul where that matmul alone reads the normed x (Backend::fused_matmul), and
  // adds in its last matmul where no norm follows it (sandwich norms: Gemma).
  void attention_block(int layer, const ForwardBatch& batch, KvCache& cache, Tensor& x);
  void mlp_block(int layer, Tensor& x);
  // rms_norm(x) by weight, in a new tensor.
  [[nodiscard]] Tensor normed(const Tensor& x, const Tensor& weight);
  // x += input @ w^T, normed by post_norm (may be null) before the add.
  void add_projection(const Tensor& input, const Tensor& w, const Tensor* post_norm, Tensor& x);
  // upload(host), kept alive here; when the backend copies, the host pages behind host are
  // released (a GPU run would otherwise hold the whole checkpoint resident).
  [[nodiscard]] const Tensor& uploaded(const Tensor& host, const WeightMap& weights);
  [[nodiscard]] const Tensor* uploaded_stacked(std::span<const Tensor* const> parts, const WeightMap& weights);
  // The layer's attention of its attention norm of x into attn [n, heads, head_dim], the
  // new keys and values into the cache: from one stacked q/k/v projection where the layer
  // has one (Backend::attend_from_qkv), else from three.
  void stacked_attention(int layer, const ForwardBatch& batch, KvCache& cache, const Tensor& x, Tensor& attn);
  void separate_attention(int layer, const ForwardBatch& batch, KvCache& cache, const Tensor& x, Tensor& attn);

  const ModelSpec& spec_;
  Backend& backend_;
  std::vector<AttentionType> attention_types_;
  std::vector<int> layer_type_;
  std::deque<Tensor> device_weights_;  // keeps what upload() returned alive (stable addresses)
  const Tensor* token_embd_ = nullptr;
  const Tensor* output_norm_ = nullptr;
  const Tensor* output_ = nullptr;
  std::vector<LayerWeights> layers_;
  int stacked_weights_ = 0;
};

// Architecture files.
[[nodiscard]] std::unique_ptr<Model> make_llama(const LoadedModel& loaded, Backend& backend);
[[nodiscard]] std::unique_ptr<Model> make_gemma3(const LoadedModel& loaded, Backend& backend);

}  // namespace pagoda
