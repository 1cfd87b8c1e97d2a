#include <cstdio>

#include "cli/commands.h"

namespace pagoda::cli {

// Placeholder until this command lands.
int cmd_bench(int, char**) {
  std::fputs("pagoda bench: not built yet\n", stderr);
  return 2;
}

}  // namespace pagoda::cli
