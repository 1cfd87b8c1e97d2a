// Test helpers: the logits of every position of a prompt (runner/prompt_logits.h), golden
// files, and where the models are cached.
#pragma once

#include <algorithm>
#include <cstdlib>
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

// Sets an environment variable for a scope (unset, or restored, at its end).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

inline std::string model_cache_dir() {
  const char* cache = std::getenv("PAGODA_CACHE");
  if (cache != nullptr && *cache != '\0') return cache;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/pagoda";
}

}  // namespace pagoda::testing
