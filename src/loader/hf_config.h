// Hugging Face config.json (+ generation_config.json) -> ModelSpec, for the architectures
// pagoda runs. Reads both the hub's legacy layout (top-level rope_theta / rope_scaling) and
// transformers 5's rope_parameters; defaults are those of transformers' config classes.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "loader/model_spec.h"

namespace pagoda {

// `generation` may be null (no generation_config.json); its bos/eos ids win over config's.
// Throws Error naming the field on a missing required field, a wrong type or an
// unsupported architecture or feature.
[[nodiscard]] ModelSpec parse_hf_config(const nlohmann::json& config, const nlohmann::json* generation);

// Reads <dir>/config.json and, when present, <dir>/generation_config.json.
[[nodiscard]] ModelSpec load_hf_config(const std::string& dir);

}  // namespace pagoda
