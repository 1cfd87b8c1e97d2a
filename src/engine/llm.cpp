#include "engine/llm.h"

#include <unordered_map>

#include "core/error.h"

namespace pagoda {

LLM::LLM(const std::string& model_path, const EngineOptions& options)
    : bundle_(model_path, options.num_threads, options.device),
      core_(bundle_.model(), bundle_.backend(), bundle_.tokenizer(), options) {}

std::vector<CompletionOutput> LLM::generate(const std::vector<std::string>& prompts,
                                            const SamplingParams& params) {
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& p : prompts) ids.push_back(bundle_.tokenizer().encode(p, true));
  return generate(ids, params);
}

std::vector<CompletionOutput> LLM::generate(const std::vector<std::vector<int32_t>>& prompts,
                                            const SamplingParams& params) {
  std::vector<RequestId> ids;
  try {
    for (const auto& p : prompts) {
      ids.push_back(std::string("llm-") + std::to_string(next_id_++));
      core_.add_request(ids.back(), p, params);
    }
  } catch (...) {
    for (const RequestId& id : ids) core_.abort(id);  // all or nothing
    while (core_.has_unfinished_requests()) (void)core_.step();
    throw;
  }
  return run_to_completion(core_, ids, params.n);
}

std::vector<CompletionOutput> run_to_completion(EngineCore& core, const std::vector<RequestId>& ids,
                                               int num_choices) {
  const auto n = static_cast<size_t>(num_choices);
  std::unordered_map<RequestId, size_t> index;
  for (size_t i = 0; i < ids.size(); ++i) index.emplace(ids[i], i);
  std::vector<CompletionOutput> outputs(ids.size() * n);
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i].index = static_cast<int>(i % n);
  size_t left = outputs.size();
  std::vector<std::vector<TokenLogprobs>> prompt_logprobs(ids.size());
  while (left > 0 && core.has_unfinished_requests()) {
    for (RequestOutput& d : core.step()) {
      const auto it = index.find(d.id);
      if (it == index.end() || d.index < 0 || static_cast<size_t>(d.index) >= n) continue;
      CompletionOutput& o = outputs[it->second * n + static_cast<size_t>(d.index)];
      if (!d.prompt_logprobs.empty()) prompt_logprobs[it->second] = std::move(d.prompt_logprobs);
      o.text += d.text;
      o.token_ids.insert(o.token_ids.end(), d.token_ids.begin(), d.token_ids.end());
      for (auto& l : d.logprobs) o.logprobs.push_back(std::move(l));
      if (d.finished) {
        o.finish_reason = d.finish_reason.value_or(FinishReason::Abort);
        o.stop_reason = d.stop_reason;
        --left;
      }
    }
  }
  if (left > 0) fail("engine: ", left, " requests ended without a final output");
  // The engine scores the prompt once (choice 0); every choice shares it, as in vLLM.
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i].prompt_logprobs = prompt_logprobs[i / n];
  return outputs;
}

}  // namespace pagoda
