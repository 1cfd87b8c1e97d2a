// pagoda tokenize / detokenize: text <-> token ids with a model's tokenizer, one JSON
// line per input, so that tests can batch thousands of strings through one process.
//   pagoda tokenize MODEL_OR_TOKENIZER [--text T] [--jsonl] [--special] [--no-add-special]
//   pagoda detokenize MODEL_OR_TOKENIZER [--keep-special] [--incremental]
// --incremental streams each line's ids one at a time through the IncrementalDetokenizer
// and prints the deltas (one per id, then the flushed rest) as a JSON array.
// MODEL_OR_TOKENIZER: a .gguf file, a Hugging Face directory or a tokenizer.json.
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/open_tokenizer.h"
#include "core/error.h"
#include "io/incremental_detokenizer.h"
#include "io/tokenizer.h"

namespace pagoda::cli {

namespace {

std::string ids_json(const std::vector<int32_t>& ids) {
  return nlohmann::json(ids).dump();
}

nlohmann::json incremental_deltas(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                                  bool skip_special) {
  IncrementalDetokenizer detokenizer(tokenizer, {skip_special, true});
  nlohmann::json deltas = nlohmann::json::array();
  for (const int32_t id : ids) deltas.push_back(detokenizer.add({&id, 1}));
  deltas.push_back(detokenizer.flush());
  return deltas;
}

}  // namespace

int cmd_tokenize(int argc, char** argv) {
  const Args args(argc, argv, {"text"}, {"jsonl", "special", "no-add-special"});
  if (args.positional().size() != 1) {
    std::fputs("usage: pagoda tokenize MODEL_OR_TOKENIZER [--text T] [--jsonl] [--special] "
               "[--no-add-special]\n  without --text: one input per stdin line (--jsonl: each "
               "line a JSON string)\n",
               stderr);
    return 2;
  }
  const auto tokenizer = open_tokenizer(args.positional()[0]);
  const bool add_special = !args.has("no-add-special");
  const bool parse_special = args.has("special");
  if (args.has("text")) {
    std::cout << ids_json(tokenizer->encode(args.get("text", ""), add_special, parse_special))
              << '\n';
    return 0;
  }
  const bool jsonl = args.has("jsonl");
  std::string line;
  for (size_t number = 1; std::getline(std::cin, line); ++number) {
    std::string text = line;
    if (jsonl) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_string()) fail("stdin line ", number, " is not a JSON string");
      text = j.get<std::string>();
    }
    std::cout << ids_json(tokenizer->encode(text, add_special, parse_special)) << '\n';
  }
  return 0;
}

int cmd_detokenize(int argc, char** argv) {
  const Args args(argc, argv, {}, {"keep-special", "incremental"});
  if (args.positional().size() != 1) {
    std::fputs("usage: pagoda detokenize MODEL_OR_TOKENIZER [--keep-special] [--incremental]\n"
               "  one JSON array of ids per stdin line; prints one JSON string per line\n"
               "  (--incremental: a JSON array of the streamed deltas, one per id, then the "
               "flushed rest)\n",
               stderr);
    return 2;
  }
  const auto tokenizer = open_tokenizer(args.positional()[0]);
  const bool skip_special = !args.has("keep-special");
  const bool incremental = args.has("incremental");
  std::string line;
  for (size_t number = 1; std::getline(std::cin, line); ++number) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_array()) fail("stdin line ", number, " is not a JSON array");
    std::vector<int32_t> ids;
    for (const auto& id : j) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
          id.get<int64_t>() >= tokenizer->vocab_size()) {
        fail("stdin line ", number, ": ", id.dump(), " is not a token id");
      }
      ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
    const nlohmann::json out = incremental ? incremental_deltas(*tokenizer, ids, skip_special)
                                           : nlohmann::json(tokenizer->decode(ids, skip_special));
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  }
  return 0;
}

}  // namespace pagoda::cli
