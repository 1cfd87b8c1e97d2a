// pagoda's command line: one binary, subcommands (generate, bench, ...).
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::puts("usage: pagoda <generate|bench> [options]");
    return argc < 2 ? 2 : 0;
  }
  std::fprintf(stderr, "pagoda: unknown command %s\n", argv[1]);
  return 2;
}
