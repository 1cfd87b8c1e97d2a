// Test helpers: the logits of every position of a prompt (runner/prompt_logits.h), golden
// files, and where the models are cached.
#pragma once

#include <algorithm>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "model/model.h"
#include "runner/prompt_logits.h"

namespace pagoda::testing {

inline std::vector<float> all_position_logits(Model& model, Backend& backend,
                                              const std::vector<int32_t>& ids, int chunk,
                                              int block_size = 16) {
  return prompt_logits(model, backend, ids, chunk, block_size);
}

inline std::vector<float> read_f32_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(values.size() * sizeof(float)),
            reinterpret_cast<char*>(values.data()));
  return values;
}

inline std::string model_cache_dir() {
  const char* cache = std::getenv("PAGODA_CACHE");
  if (cache != nullptr && *cache != '\0') return cache;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/pagoda";
}

}  // namespace pagoda::testing
