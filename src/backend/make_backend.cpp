// Picks the backend for a --device value. The CUDA entry points exist only in builds with
// PAGODA_CUDA; elsewhere "cuda" is a clear error and "auto" means the CPU.
#include "backend/backend.h"
#include "core/error.h"

#ifdef PAGODA_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace pagoda {

int cuda_device_count() {
#ifdef PAGODA_HAVE_CUDA
  return cuda::device_count();
#else
  return 0;
#endif
}

std::unique_ptr<Backend> make_backend(const std::string& device, int num_threads) {
  if (device == "cpu") return make_cpu_backend(num_threads);
  if (device == "cuda" || device == "auto") {
#ifdef PAGODA_HAVE_CUDA
    if (cuda::device_count() > 0) return cuda::make_cuda_backend(0);
    if (device == "cuda") fail("--device cuda: no CUDA GPU is visible");
#else
    if (device == "cuda") fail("--device cuda: this build has no CUDA backend (configure with -DPAGODA_CUDA=ON)");
#endif
    return make_cpu_backend(num_threads);
  }
  fail("--device: expected cpu, cuda or auto, got '", device, "'");
}

}  // namespace pagoda
