// The engine flags shared by generate and bench throughput, named as vLLM's
// (--max-num-seqs, --kv-cache-memory, --enable-prefix-caching ...), and their parsing.
#pragma once

#include <set>
#include <string>

#include "cli/args.h"
#include "engine/engine_options.h"

namespace pagoda::cli {

[[nodiscard]] std::set<std::string> with_engine_value_options(std::set<std::string> options);
[[nodiscard]] std::set<std::string> with_engine_flag_options(std::set<std::string> flags);
// Throws Error on a malformed value.
[[nodiscard]] EngineOptions engine_options_from(const Args& args);

}  // namespace pagoda::cli
