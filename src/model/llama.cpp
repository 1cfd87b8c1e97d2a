// Llama 2/3/3.1 (llama3 rope scaling), SmolLM2 (tied embeddings), Mistral (sliding window),
// Qwen2/2.5 (qkv bias) and Qwen3 (q/k norm): one attention type for every layer.
#include "model/decoder.h"
#include "model/rope_freqs.h"

namespace pagoda {

std::unique_ptr<Model> make_llama(const LoadedModel& loaded, Backend& backend) {
  const ModelSpec& s = loaded.spec;
  AttentionType type;
  type.inv_freq = rope_inv_freq(s.rope_theta, s.head_dim, s.rope_scaling,
                                loaded.weights.find("rope_freqs.weight"));
  type.rope.rot_dim = s.head_dim;
  type.rope.neox = s.rope_neox;
  type.sliding_window = s.sliding_window;
  std::vector<AttentionType> types;
  types.push_back(std::move(type));
  return std::make_unique<Decoder>(loaded, backend, std::move(types), std::vector<int>(static_cast<size_t>(s.num_layers), 0));
}

}  // namespace pagoda
