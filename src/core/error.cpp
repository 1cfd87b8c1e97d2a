#include "core/error.h"

#include <cstdio>
#include <cstdlib>

namespace pagoda {

void check_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "pagoda: internal check failed: %s at %s:%d\n", expr, file, line);
  std::abort();
}

}  // namespace pagoda
