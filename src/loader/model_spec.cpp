#include "loader/model_spec.h"

#include <cmath>

namespace pagoda {

float ModelSpec::attention_scale() const {
  const float d = query_pre_attn_scalar > 0 ? query_pre_attn_scalar : static_cast<float>(head_dim);
  return 1.0f / std::sqrt(d);
}

const char* arch_name(Arch arch) {
  switch (arch) {
    case Arch::Llama: return "llama";
    case Arch::Mistral: return "mistral";
    case Arch::Qwen2: return "qwen2";
    case Arch::Qwen3: return "qwen3";
    case Arch::Gemma3: return "gemma3";
  }
  return "unknown";
}

}  // namespace pagoda
