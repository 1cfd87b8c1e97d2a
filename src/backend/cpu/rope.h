// Rotary position embedding of the CPU backend, in place on [tokens, heads, head_dim].
// Angles are position * inv_freq in f32 and cos/sin in f32, as Hugging Face computes them.
#pragma once

#include <cstdint>

#include "backend/backend.h"
#include "core/thread_pool.h"

namespace pagoda::cpu {

void rope(ThreadPool& pool, float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim,
          const int32_t* positions, const RopeConfig& config);

}  // namespace pagoda::cpu
