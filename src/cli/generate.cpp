// pagoda generate [MODEL] --prompt TEXT --max-tokens N --temperature T --seed S
// Prints only the generated text, streamed as it is produced.
#include <cstdio>
#include <string>

#include "backend/backend.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_session.h"
#include "runner/batch_generator.h"

namespace pagoda::cli {

int cmd_generate(int argc, char** argv) {
  const Args args(argc, argv, {"prompt", "max-tokens", "temperature", "seed", "threads"}, {"ignore-eos"});
  if (args.positional().size() > 1) fail("expected at most one MODEL argument");
  if (!args.has("prompt")) fail("--prompt is required");
  ModelSession session(args.positional().empty() ? default_model_path() : args.positional()[0],
                       static_cast<int>(args.get_int("threads", 0, 0, 1024)));

  GenerateOptions options;
  options.max_tokens = static_cast<int>(args.get_int("max-tokens", 64, 1, 1 << 20));
  options.temperature = static_cast<float>(args.get_double("temperature", 0.0, 0.0, 100.0));
  options.seed = static_cast<uint64_t>(args.get_int("seed", 0, 0, (1LL << 62)));
  options.stop_at_eos = !args.has("ignore-eos");

  const Tokenizer& tok = session.tokenizer();
  const std::vector<int32_t> prompt = tok.encode(args.get("prompt", ""), /*add_special=*/true);
  BatchGenerator generator(session.model(), session.backend());

  // Print the decoded text's growth, holding back a trailing incomplete UTF-8 sequence
  // (decoded as U+FFFD) until later tokens complete it.
  std::vector<int32_t> output;
  std::string printed;
  auto flush = [&](bool final) {
    const std::string text = tok.decode(output);
    std::string ready = text;
    if (!final && ready.size() >= 3 && ready.compare(ready.size() - 3, 3, "\xEF\xBF\xBD") == 0) return;
    if (ready.size() > printed.size() && ready.compare(0, printed.size(), printed) == 0) {
      std::fwrite(ready.data() + printed.size(), 1, ready.size() - printed.size(), stdout);
      std::fflush(stdout);
      printed = ready;
    }
  };
  generator.generate({prompt}, options, [&](int32_t id) { return tok.is_end_of_generation(id); },
                     [&](int, int32_t id) {
                       output.push_back(id);
                       flush(false);
                     });
  flush(true);
  std::fputc('\n', stdout);
  return 0;
}

}  // namespace pagoda::cli
