#include <cstdio>

#include "cli/commands.h"

namespace pagoda::cli {

// Placeholder until this command lands.
int cmd_inspect(int, char**) {
  std::fputs("pagoda inspect: not built yet\n", stderr);
  return 2;
}

}  // namespace pagoda::cli
