// The CUDA backend's environment settings (PAGODA_*), read the same way everywhere: kernels'
// choices for device A/Bs and the backend's opt-ins and opt-outs.
#pragma once

namespace pagoda::cuda {

// Whether $name is set to something other than "" and "0".
bool env_flag(const char* name);
// Whether $name is set to "0".
bool env_off(const char* name);
// $name as an integer clamped to [lo, hi]; fallback when unset.
int env_int(const char* name, int fallback, int lo, int hi);

}  // namespace pagoda::cuda
