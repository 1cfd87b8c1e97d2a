#include <cstdio>

#include "cli/commands.h"

namespace pagoda::cli {

// Placeholder until this command lands.
int cmd_dequant(int, char**) {
  std::fputs("pagoda dequant: not built yet\n", stderr);
  return 2;
}

}  // namespace pagoda::cli
