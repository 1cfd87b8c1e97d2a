// Logits for every position of one prompt: the prompt is run in prefill chunks over a paged
// KV cache whose block ids are deliberately scattered (so no test passes by a contiguous
// layout by accident). Used by `pagoda logits` and by the model tests.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"

namespace pagoda {

// Row-major [ids.size(), vocab_size] F32 logits. chunk >= 1 tokens per forward pass.
[[nodiscard]] std::vector<float> prompt_logits(Model& model, Backend& backend, const std::vector<int32_t>& ids,
                                               int chunk, int block_size = 16);

}  // namespace pagoda
