#include "model/rope_freqs.h"

#include <cmath>
#include <numbers>

namespace pagoda {

namespace {

// transformers' _compute_llama3_parameters: long wavelengths are divided by the factor,
// short ones kept, the band in between interpolated.
void apply_llama3(std::vector<float>& inv_freq, const RopeScaling& s) {
  const float old_len = static_cast<float>(s.original_max_position_embeddings);
  const float low_wavelen = old_len / s.low_freq_factor;
  const float high_wavelen = old_len / s.high_freq_factor;
  for (float& f : inv_freq) {
    const float wavelen = 2.0f * std::numbers::pi_v<float> / f;
    const float scaled = wavelen > low_wavelen ? f / s.factor : f;
    const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
    if (medium) {
      const float smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      f = (1.0f - smooth) * scaled / s.factor + smooth * scaled;
    } else {
      f = scaled;
    }
  }
}

}  // namespace

std::vector<float> rope_inv_freq(float base, int rot_dim, const RopeScaling& scaling,
                                 const Tensor* rope_freqs) {
  std::vector<float> inv_freq(static_cast<size_t>(rot_dim / 2));
  for (int i = 0; i < rot_dim / 2; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(rot_dim);
    inv_freq[static_cast<size_t>(i)] = 1.0f / std::pow(base, exponent);
  }
  switch (scaling.type) {
    case RopeScalingType::None: break;
    case RopeScalingType::Linear:
      for (float& f : inv_freq) f /= scaling.factor;
      break;
    case RopeScalingType::Llama3:
      if (rope_freqs == nullptr) apply_llama3(inv_freq, scaling);
      break;
  }
  if (rope_freqs != nullptr) {
    if (rope_freqs->dtype() != DType::F32 || rope_freqs->numel() != rot_dim / 2) {
      fail("rope_freqs.weight must be F32 with ", rot_dim / 2, " elements");
    }
    for (int i = 0; i < rot_dim / 2; ++i) inv_freq[static_cast<size_t>(i)] /= rope_freqs->data<float>()[i];
  }
  return inv_freq;
}

}  // namespace pagoda
