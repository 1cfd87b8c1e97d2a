// One token's share of a row's logits processors, as a device applies them. Plain C++17 so
// that CUDA code can include it (sample/logit_edits.h builds these and applies them on the
// host; backend/cuda/sampling.cu applies them on the GPU).
#pragma once

#include <cstdint>

namespace pagoda {

// Everything the processors do to one token, applied in their order: masked (bad_words,
// min_tokens: -inf), + bias (logit_bias, clamped), the repetition penalty (the token is in
// the prompt or the output: positive logits divided by it, others multiplied), then
// - frequency * output_count - presence (when output_count > 0).
struct LogitEdit {
  int32_t token = 0;
  int32_t output_count = 0;  // 0 when the frequency and presence penalties are off
  float bias = 0.0f;         // used when has_bias
  uint8_t masked = 0;
  uint8_t has_bias = 0;
  uint8_t repeated = 0;  // set only when the repetition penalty is on
  uint8_t unused = 0;
};

// A row's penalty values, the same for all its edits.
struct RowPenalties {
  float repetition = 1.0f;
  float frequency = 0.0f;
  float presence = 0.0f;
};

}  // namespace pagoda
