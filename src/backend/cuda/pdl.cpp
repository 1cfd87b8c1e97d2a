#include "backend/cuda/pdl.h"

#include "backend/cuda/env_settings.h"

namespace pagoda::cuda {

bool pdl_enabled() {
  static const bool enabled = [] {
    if (env_off("PAGODA_PDL")) return false;
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return major >= 9;
  }();
  return enabled;
}

}  // namespace pagoda::cuda
