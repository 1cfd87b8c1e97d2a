// Helpers for scheduler tests: a fake runner that "samples" a deterministic token for every
// request whose prompt is fully computed, and request builders.
#pragma once

#include <string>
#include <vector>

#include "sched/scheduler.h"

namespace pagoda::test {

// The token a fake model emits at position pos of request id: depends only on both, so a
// request's outputs do not depend on batching or preemption.
inline TokenId fake_token(const RequestId& id, int pos) {
  uint32_t h = 2166136261u;
  for (const char c : id) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return static_cast<TokenId>((h ^ (static_cast<uint32_t>(pos) * 2654435761u)) % 30000) + 1000;
}

// One token for each scheduled request that has no prompt left to compute.
inline SampledTokens fake_sample(const Scheduler& s, const SchedulerOutput& out) {
  SampledTokens sampled;
  for (const auto& [id, n] : out.num_scheduled_tokens) {
    const Request* r = s.find_request(id);
    if (r && r->num_computed_tokens == r->num_tokens())
      sampled[id] = {fake_token(id, r->num_tokens())};
  }
  return sampled;
}

inline RequestParams make_params(const std::string& id, std::vector<TokenId> prompt,
                                 int max_tokens = 16, int priority = 0) {
  RequestParams p;
  p.id = id;
  p.prompt_token_ids = std::move(prompt);
  p.max_tokens = max_tokens;
  p.priority = priority;
  return p;
}

// Prompt tokens first, first + 1, ...
inline std::vector<TokenId> prompt_of(int n, TokenId first = 0) {
  std::vector<TokenId> v;
  for (int i = 0; i < n; ++i) v.push_back(first + i);
  return v;
}

}  // namespace pagoda::test
