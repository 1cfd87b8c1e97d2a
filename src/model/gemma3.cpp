// Gemma 3: sliding-window layers (local rope base, usually 10k) interleaved with global
// layers (rope_theta, with rope scaling); the rest (q/k norm, sandwich norms, GeGLU,
// scaled embeddings, query_pre_attn_scalar) comes from the spec's flags.
#include "model/decoder.h"
#include "model/rope_freqs.h"

namespace pagoda {

std::unique_ptr<Model> make_gemma3(const LoadedModel& loaded, Backend& backend) {
  const ModelSpec& s = loaded.spec;
  if (static_cast<int>(s.layer_sliding.size()) != s.num_layers) {
    fail("gemma3: layer_sliding has ", s.layer_sliding.size(), " entries for ", s.num_layers, " layers");
  }
  AttentionType global;
  global.inv_freq = rope_inv_freq(s.rope_theta, s.head_dim, s.rope_scaling);
  global.rope.rot_dim = s.head_dim;
  global.rope.neox = s.rope_neox;
  AttentionType local;
  local.inv_freq = rope_inv_freq(s.rope_local_theta, s.head_dim, RopeScaling{});
  local.rope = global.rope;
  local.sliding_window = s.sliding_window;
  // attn_logit_softcapping stays off: transformers' Gemma 3 attention does not apply it
  // (Gemma 2's did), and no released Gemma 3 config sets it.

  std::vector<int> layer_type;
  for (bool sliding : s.layer_sliding) layer_type.push_back(sliding ? 1 : 0);
  std::vector<AttentionType> types;
  types.push_back(std::move(global));
  types.push_back(std::move(local));
  return std::make_unique<Decoder>(loaded, backend, std::move(types), std::move(layer_type));
}

}  // namespace pagoda
