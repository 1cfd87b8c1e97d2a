// pagoda logits MODEL (--ids 1,2,3 | --ids-file FILE.json) [--device D] [--chunk N]
//                [--output FILE.f32] [--threads N]
// Runs one prompt of token ids through the model and writes the logits of every position
// as raw little-endian float32 [num_tokens, vocab] (for comparisons against transformers:
// tools/cuda_vs_transformers.py). Prints a JSON summary with each position's top-1 id.
// Needs only the weights: no tokenizer is loaded.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "loader/load_model.h"
#include "model/model.h"
#include "runner/prompt_logits.h"

namespace pagoda::cli {

namespace {

std::vector<int32_t> parse_ids(const Args& args) {
  std::vector<int32_t> ids;
  if (args.has("ids-file")) {
    std::ifstream in(args.get("ids-file", ""));
    if (!in) fail("cannot read ", args.get("ids-file", ""));
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!j.is_array()) fail("--ids-file: expected a JSON array of token ids");
    for (const auto& v : j) {
      if (!v.is_number_integer()) fail("--ids-file: every element must be an integer id");
      ids.push_back(v.get<int32_t>());
    }
  } else {
    std::stringstream in(args.get("ids", ""));
    std::string item;
    while (std::getline(in, item, ',')) {
      try {
        size_t used = 0;
        ids.push_back(static_cast<int32_t>(std::stol(item, &used)));
        if (used != item.size()) throw std::invalid_argument(item);
      } catch (const std::exception&) {
        fail("--ids: expected comma-separated integers, got '", item, "'");
      }
    }
  }
  if (ids.empty()) fail("give the prompt with --ids 1,2,3 or --ids-file FILE.json");
  return ids;
}

}  // namespace

int cmd_logits(int argc, char** argv) {
  const Args args(argc, argv, {"ids", "ids-file", "device", "chunk", "output", "threads"});
  if (args.positional().size() != 1) fail("expected one MODEL argument");
  const std::vector<int32_t> ids = parse_ids(args);
  const std::unique_ptr<Backend> backend =
      make_backend(args.get("device", "auto"), static_cast<int>(args.get_int("threads", 0, 0, 1024)));
  const LoadedModel loaded = load_model(args.positional()[0]);
  const std::unique_ptr<Model> model = make_model(loaded, *backend);
  const int vocab = model->spec().vocab_size;
  for (const int32_t id : ids) {
    if (id < 0 || id >= vocab) fail("token id ", id, " is outside the vocabulary of ", vocab);
  }
  const int chunk = static_cast<int>(args.get_int("chunk", static_cast<long long>(ids.size()), 1, 1 << 20));

  const auto start = std::chrono::steady_clock::now();
  const std::vector<float> logits = prompt_logits(*model, *backend, ids, chunk);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (args.has("output")) {
    std::ofstream out(args.get("output", ""), std::ios::binary);
    out.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size() * sizeof(float)));
    if (!out) fail("cannot write ", args.get("output", ""));
  }
  std::vector<int> top1;
  for (size_t t = 0; t < ids.size(); ++t) {
    const float* row = logits.data() + t * static_cast<size_t>(vocab);
    top1.push_back(static_cast<int>(std::max_element(row, row + vocab) - row));
  }
  const nlohmann::json summary = {{"model", args.positional()[0]}, {"backend", backend->name()},
                                  {"num_tokens", ids.size()},      {"vocab_size", vocab},
                                  {"seconds", seconds},            {"top1", top1}};
  std::puts(summary.dump().c_str());
  return 0;
}

}  // namespace pagoda::cli
