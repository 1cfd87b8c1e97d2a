// Test helpers for the engine: the SmolLM2 GGUF loaded once per test binary, engine cores
// over it, and a loop that runs requests to completion while recording every delta.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/engine_core.h"
#include "engine/model_bundle.h"
#include "model/forward_util.h"

namespace pagoda::testing {

// The engine tests' model: SmolLM2 from the model cache, or PAGODA_TEST_MODEL (any checkpoint
// with a tokenizer: the device machine, which cannot receive the GGUF, builds one there).
inline std::string smollm2_path() {
  const char* model = std::getenv("PAGODA_TEST_MODEL");
  return model != nullptr && *model != '\0' ? model : model_cache_dir() + "/SmolLM2-135M-Instruct.Q4_1.gguf";
}

inline bool skip_slow() { return std::getenv("PAGODA_SKIP_SLOW") != nullptr; }

// The backend the engine tests run on: PAGODA_TEST_DEVICE (cpu, cuda), cpu by default, so
// the same tests run on the GPU of the device machine.
inline std::string test_device() {
  const char* d = std::getenv("PAGODA_TEST_DEVICE");
  return d != nullptr && *d != '\0' ? d : "cpu";
}

// Null when the model file is absent.
inline ModelBundle* smollm2() {
  static std::unique_ptr<ModelBundle> bundle = [] {
    return std::filesystem::exists(smollm2_path())
               ? std::make_unique<ModelBundle>(smollm2_path(), 0, test_device())
               : nullptr;
  }();
  return bundle.get();
}

#define PAGODA_NEED_SMOLLM2(var)                                                     \
  ModelBundle* var = ::pagoda::testing::smollm2();                                   \
  if (var == nullptr) GTEST_SKIP() << "model not found: " << ::pagoda::testing::smollm2_path()

inline EngineOptions small_options() {
  EngineOptions o;
  o.max_model_len = 256;
  o.kv_cache_memory = int64_t{64} << 20;
  o.max_num_batched_tokens = 256;
  return o;
}

inline std::unique_ptr<EngineCore> make_core(ModelBundle& b, const EngineOptions& o) {
  return std::make_unique<EngineCore>(b.model(), b.backend(), b.tokenizer(), o);
}

inline SamplingParams greedy(int max_tokens) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;
  return p;
}

// Random prompts of ordinary (non-special) tokens.
inline std::vector<int32_t> random_prompt(std::mt19937& rng, int len) {
  std::uniform_int_distribution<int32_t> tok(100, 40000);
  std::vector<int32_t> p(static_cast<size_t>(len));
  for (auto& t : p) t = tok(rng);
  return p;
}

struct Collected {
  std::string text;
  std::vector<int32_t> token_ids;
  std::optional<FinishReason> reason;
  std::string stop_reason;
  int num_finals = 0;
};

// Adds one delta to what its request has produced so far.
inline void merge_delta(std::map<RequestId, Collected>& acc, const RequestOutput& d) {
  Collected& c = acc[d.id];
  EXPECT_EQ(c.num_finals, 0) << d.id << ": output after the final one";
  c.text += d.text;
  c.token_ids.insert(c.token_ids.end(), d.token_ids.begin(), d.token_ids.end());
  if (d.finished) {
    ++c.num_finals;
    c.reason = d.finish_reason;
    c.stop_reason = d.stop_reason;
  }
}

// Steps the core until it is idle, merging every delta per request.
inline std::map<RequestId, Collected> drain(EngineCore& core, std::map<RequestId, Collected> acc = {}) {
  while (core.has_unfinished_requests()) {
    for (const RequestOutput& d : core.step()) merge_delta(acc, d);
  }
  return acc;
}

// For tests run with and without async scheduling (TEST_P over a bool).
inline std::string scheduling_name(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Async" : "Sync";
}

// One request alone on a fresh core.
inline Collected run_alone(ModelBundle& b, const EngineOptions& o, const std::vector<int32_t>& prompt,
                           const SamplingParams& p) {
  auto core = make_core(b, o);
  core->add_request("alone", prompt, p);
  return drain(*core)["alone"];
}

}  // namespace pagoda::testing
