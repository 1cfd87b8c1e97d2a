#include "backend/cuda/pdl.h"

#include <cstdlib>
#include <cstring>

namespace pagoda::cuda {

bool pdl_enabled() {
  static const bool enabled = [] {
    const char* flag = std::getenv("PAGODA_PDL");
    if (flag != nullptr && std::strcmp(flag, "0") == 0) return false;
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
