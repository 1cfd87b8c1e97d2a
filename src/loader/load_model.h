// Opens a model from a path: a .gguf file or a Hugging Face directory (config.json +
// safetensors). The result holds the spec, the weights (views into the mmap where the
// layout allows) and what owns their memory.
#pragma once

#include <memory>
#include <string>

#include "loader/model_spec.h"
#include "loader/weights.h"

namespace pagoda {

class GgufFile;

struct LoadedModel {
  ModelSpec spec;
  WeightMap weights;
  std::shared_ptr<GgufFile> gguf;  // set when loaded from GGUF (its vocabulary lives there)
  std::string hf_dir;              // set when loaded from a Hugging Face directory
};

// Throws Error naming the path and the problem.
[[nodiscard]] LoadedModel load_model(const std::string& path);

// From an opened GGUF file (loader/gguf_model.cpp) and from a HF directory (loader/hf_model.cpp).
[[nodiscard]] LoadedModel load_gguf_model(std::shared_ptr<GgufFile> file);
[[nodiscard]] LoadedModel load_hf_model(const std::string& dir);

}  // namespace pagoda
