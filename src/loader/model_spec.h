// What a forward pass needs to know about a model, whatever file it came from. The GGUF
// and Hugging Face loaders both fill this in; model code reads only this and the weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pagoda {

enum class Arch { Llama, Mistral, Qwen2, Qwen3, Gemma3 };

enum class RopeScalingType { None, Linear, Llama3 };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  float factor = 1.0f;
  // llama3 only
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int original_max_position_embeddings = 8192;
};

enum class Activation { Silu, GeluTanh };

struct ModelSpec {
  Arch arch = Arch::Llama;
  std::string arch_name;  // as the file names it ("llama", "qwen2", "gemma3", ...)

  int vocab_size = 0;
  int hidden_size = 0;
  int intermediate_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int max_position_embeddings = 0;
  float rms_norm_eps = 1e-5f;
  Activation activation = Activation::Silu;

  float rope_theta = 10000.0f;
  // true: HF rotate_half layout; false: adjacent pairs (GGUF llama, whose q/k rows
  // the converter permuted).
  bool rope_neox = true;
  RopeScaling rope_scaling;

  bool tie_word_embeddings = false;
  bool attention_bias = false;  // Qwen2: q/k/v projections carry a bias
  bool qk_norm = false;         // Qwen3, Gemma 3: RMSNorm over each head of q and k

  // Gemma 3
  bool embed_scale = false;           // multiply embeddings by sqrt(hidden_size)
  bool sandwich_norms = false;        // extra norms after attention and after the MLP
  float query_pre_attn_scalar = 0;    // attention scale = 1/sqrt(this) when > 0
  int sliding_window = 0;             // 0: none
  std::vector<bool> layer_sliding;    // per layer: uses the sliding window
  float rope_local_theta = 10000.0f;  // rope base of sliding layers
  float final_logit_softcap = 0;      // 0: none
  float attn_logit_softcap = 0;       // 0: none

  int bos_token_id = -1;
  std::vector<int> eos_token_ids;

  [[nodiscard]] float attention_scale() const;
};

[[nodiscard]] const char* arch_name(Arch arch);

}  // namespace pagoda
