// The offline API, as vLLM's LLM: load a model, generate for a list of prompts, get the
// whole outputs back. Runs the engine core on the calling thread.
#pragma once

#include <string>
#include <vector>

#include "engine/engine_core.h"
#include "engine/model_bundle.h"

namespace pagoda {

struct CompletionOutput {
  int index = 0;  // which of its prompt's n choices
  std::string text;
  std::vector<int32_t> token_ids;
  std::vector<TokenLogprobs> logprobs;
  FinishReason finish_reason = FinishReason::Length;
  std::string stop_reason;
  std::vector<TokenLogprobs> prompt_logprobs;  // with prompt_logprobs, on every choice
};

class LLM {
 public:
  LLM(const std::string& model_path, const EngineOptions& options);

  // params.n outputs per prompt, in order: choice j of prompt i at i * n + j (n = 1: one
  // per prompt). Prompts are encoded with the tokenizer's special tokens (BOS where the
  // vocabulary asks for it). Throws Error on bad params.
  [[nodiscard]] std::vector<CompletionOutput> generate(const std::vector<std::string>& prompts,
                                                       const SamplingParams& params);
  [[nodiscard]] std::vector<CompletionOutput> generate(const std::vector<std::vector<int32_t>>& prompts,
                                                       const SamplingParams& params);

  [[nodiscard]] const Tokenizer& tokenizer() const { return bundle_.tokenizer(); }
  [[nodiscard]] EngineCore& core() { return core_; }
  [[nodiscard]] std::string backend_name() const { return bundle_.backend().name(); }

 private:
  ModelBundle bundle_;
  EngineCore core_;
  uint64_t next_id_ = 0;
};

// Drives a core until the given requests are done; collects their outputs in order,
// num_choices per request (choice j of request i at i * num_choices + j).
[[nodiscard]] std::vector<CompletionOutput> run_to_completion(EngineCore& core, const std::vector<RequestId>& ids,
                                                              int num_choices = 1);

}  // namespace pagoda
