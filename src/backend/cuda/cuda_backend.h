// The CUDA backend: the Backend interface on one NVIDIA GPU. Weights live on the GPU as
// BF16 matrices and F32 vectors; activations and the KV cache are F32; GEMMs go through
// cuBLASLt (BF16 in, F32 accumulate) and every other op is a kernel of this folder, all on
// one stream, so that the only synchronization of a step is the download of its logits.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace pagoda::cuda {

// Visible CUDA devices (0 when the driver or a GPU is missing).
[[nodiscard]] int device_count();
// Throws Error when the device cannot be used.
[[nodiscard]] std::unique_ptr<Backend> make_cuda_backend(int device);

}  // namespace pagoda::cuda
