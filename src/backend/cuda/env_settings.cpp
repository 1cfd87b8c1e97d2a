#include "backend/cuda/env_settings.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace pagoda::cuda {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "0") == 0;
}

int env_int(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::clamp(std::atoi(v), lo, hi) : fallback;
}

}  // namespace pagoda::cuda
