// pagoda's command line: one binary, one subcommand per file (see commands.h).
#include <cstdio>
#include <cstring>
#include <exception>

#include "cli/commands.h"
#include "core/error.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* help;
};

constexpr Command kCommands[] = {
    {"generate", pagoda::cli::cmd_generate, "generate text from a prompt"},
    {"serve", pagoda::cli::cmd_serve, "OpenAI-compatible HTTP server (vLLM's endpoints)"},
    {"bench", pagoda::cli::cmd_bench, "benchmarks (latency, throughput, serve, tokenize), JSON output"},
    {"inspect", pagoda::cli::cmd_inspect, "print a model file's metadata and tensors as JSON"},
    {"dequant", pagoda::cli::cmd_dequant, "dequantize raw blocks to f32 (test tool)"},
    {"template", pagoda::cli::cmd_template, "render a model's chat template for a conversation"},
    {"tokenize", pagoda::cli::cmd_tokenize, "text -> token ids (JSON), one line per input"},
    {"detokenize", pagoda::cli::cmd_detokenize, "token ids (JSON) -> text, one line per input"},
    {"logits", pagoda::cli::cmd_logits, "every position's logits for a prompt of ids (test tool)"},
};

void usage(FILE* out) {
  std::fputs("usage: pagoda <command> [options]\n\ncommands:\n", out);
  for (const Command& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.help);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.run(argc - 2, argv + 2);
    } catch (const pagoda::Error& e) {
      std::fprintf(stderr, "pagoda %s: %s\n", c.name, e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pagoda %s: unexpected error: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "pagoda: unknown command %s\n", argv[1]);
  usage(stderr);
  return 2;
}
