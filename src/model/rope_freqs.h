// Rotary inverse frequencies for a model's attention types, with rope scaling applied
// exactly as transformers computes them (float32).
#pragma once

#include <vector>

#include "core/tensor.h"
#include "loader/model_spec.h"

namespace pagoda {

// inv_freq[i] = 1 / base^(2i / rot_dim), i < rot_dim / 2, then scaled per spec.rope_scaling.
// rope_freqs: optional per-pair divisors (GGUF's rope_freqs.weight, llama3 models).
[[nodiscard]] std::vector<float> rope_inv_freq(float base, int rot_dim, const RopeScaling& scaling,
                                               const Tensor* rope_freqs = nullptr);

}  // namespace pagoda
