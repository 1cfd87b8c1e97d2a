#include "backend/cpu/rope.h"

#include <cmath>
#include <vector>

namespace pagoda::cpu {

void rope(ThreadPool& pool, float* x, int64_t num_tokens, int64_t num_heads, int64_t head_dim,
          const int32_t* positions, const RopeConfig& config) {
  const int half = config.rot_dim / 2;
  pool.parallel_for(num_tokens, [&](int64_t begin, int64_t end) {
    std::vector<float> cos_v(static_cast<size_t>(half)), sin_v(static_cast<size_t>(half));
    for (int64_t t = begin; t < end; ++t) {
      const float pos = static_cast<float>(positions[t]);
      for (int i = 0; i < half; ++i) {
        const float angle = pos * config.inv_freq[i];
        cos_v[static_cast<size_t>(i)] = std::cos(angle) * config.attention_factor;
        sin_v[static_cast<size_t>(i)] = std::sin(angle) * config.attention_factor;
      }
      for (int64_t h = 0; h < num_heads; ++h) {
        float* v = x + (t * num_heads + h) * head_dim;
        for (int i = 0; i < half; ++i) {
          // neox: (i, i + half), as HF's rotate_half; otherwise adjacent pairs (2i, 2i + 1).
          const int a = config.neox ? i : 2 * i;
          const int b = config.neox ? i + half : 2 * i + 1;
          const float c = cos_v[static_cast<size_t>(i)], s = sin_v[static_cast<size_t>(i)];
          const float x0 = v[a], x1 = v[b];
          v[a] = x0 * c - x1 * s;
          v[b] = x1 * c + x0 * s;
        }
      }
    }
  });
}

}  // namespace pagoda::cpu
