// The gated activations, act(gate) * up, shared by the elementwise kernels and the GEMV that
// applies them in its epilogue (gemv.cu), so both give the same bits. gelu is the tanh
// approximation.
#pragma once

#include <cmath>

namespace pagoda::cuda {

__device__ __forceinline__ float silu_times(float g, float u) { return g / (1.0f + expf(-g)) * u; }

__device__ __forceinline__ float gelu_times(float g, float u) {
  const float inner = 0.7978845608028654f * (g + 0.044715f * g * g * g);  // sqrt(2/pi)
  return 0.5f * g * (1.0f + tanhf(inner)) * u;
}

}  // namespace pagoda::cuda
