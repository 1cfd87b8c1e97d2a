// pagoda generate [MODEL] --prompt TEXT --max-tokens N --temperature T --seed S [engine flags]
// Prints only the generated text, streamed delta by delta from the engine.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/engine_args.h"
#include "engine/llm_engine.h"

namespace pagoda::cli {

int cmd_generate(int argc, char** argv) {
  const Args args(argc, argv, with_engine_value_options({"prompt", "max-tokens", "temperature", "seed"}),
                  with_engine_flag_options({"ignore-eos"}));
  if (args.positional().size() > 1) fail("expected at most one MODEL argument");
  if (!args.has("prompt")) fail("--prompt is required");
  const EngineOptions options = engine_options_from(args);
  LLMEngine engine(args.positional().empty() ? default_model_path() : args.positional()[0], options);

  SamplingParams params;
  params.max_tokens = args.get_int("max-tokens", 64, 1, 1 << 20);
  params.temperature = static_cast<float>(args.get_double("temperature", 0.0, 0.0, 100.0));
  params.seed = args.get_int("seed", 0, 0, (1LL << 62));
  params.ignore_eos = args.has("ignore-eos");
  const std::vector<int32_t> prompt = engine.tokenizer().encode(args.get("prompt", ""), /*add_special=*/true);
  auto stream = engine.add_request("generate-0", prompt, params);
  while (auto delta = stream->next()) {
    std::fwrite(delta->text.data(), 1, delta->text.size(), stdout);
    std::fflush(stdout);
  }
  std::fputc('\n', stdout);
  return 0;
}

}  // namespace pagoda::cli
