#include "engine/parallel_sampling.h"

#include <algorithm>

#include "core/error.h"

namespace pagoda {

RequestId child_request_id(const RequestId& parent, int index) {
  return parent + "#" + std::to_string(index);
}

SamplingParams child_sampling_params(const SamplingParams& parent, int index) {
  SamplingParams p = parent;
  p.n = 1;
  // Wraps like an unsigned add instead of overflowing near INT64_MAX (vLLM's Python ints
  // cannot overflow; any fixed, distinct per-choice seed keeps the point).
  if (p.seed)
    p.seed = static_cast<int64_t>(static_cast<uint64_t>(*p.seed) + static_cast<uint64_t>(index));
  if (index > 0) p.prompt_logprobs.reset();
  return p;
}

std::vector<RequestId> ParallelSampling::ids_taken_by(const RequestId& id, int n) {
  std::vector<RequestId> ids{id};
  for (int i = 0; n > 1 && i < n; ++i) ids.push_back(child_request_id(id, i));
  return ids;
}

int ParallelSampling::num_held_children() const {
  int n = 0;
  for (const auto& [id, p] : parents_) n += static_cast<int>(p.held.size());
  return n;
}

std::vector<ChildRequest> ParallelSampling::fan_out(const RequestId& parent,
                                                    std::vector<int32_t> prompt_ids,
                                                    const SamplingParams& params, bool share_prompt,
                                                    std::chrono::steady_clock::time_point arrival) {
  PAGODA_CHECK(params.n > 1 && !reserves(parent));
  Parent p;
  p.num_open = params.n;
  std::vector<ChildRequest> now;
  for (int i = 0; i < params.n; ++i) {
    ChildRequest c{child_request_id(parent, i), prompt_ids, child_sampling_params(params, i),
                   arrival};
    PAGODA_CHECK(!reserves(c.id));
    owner_.emplace(c.id, Owner{parent, i});
    p.children.push_back(c.id);
    (i == 0 || !share_prompt ? now : p.held).push_back(std::move(c));
  }
  parents_.emplace(parent, std::move(p));
  return now;
}

void ParallelSampling::to_parent(RequestOutput& delta, std::vector<ChildRequest>& release) {
  const auto o = owner_.find(delta.id);
  if (o == owner_.end()) return;
  const auto it = parents_.find(o->second.parent);
  PAGODA_CHECK(it != parents_.end());
  Parent& p = it->second;
  delta.index = o->second.index;
  delta.id = o->second.parent;
  // The first child's first output follows its prefill: the prompt's full blocks are in
  // the prefix cache now (finished or not, its freed blocks stay cached until evicted).
  if (o->second.index == 0 && !p.held.empty()) {
    for (ChildRequest& c : p.held) release.push_back(std::move(c));
    p.held.clear();
  }
  if (!delta.finished) return;
  owner_.erase(o);
  if (--p.num_open > 0) return;
  parents_.erase(it);
}

std::vector<RequestId> ParallelSampling::abort(const RequestId& parent,
                                               std::vector<RequestOutput>& finals) {
  const auto it = parents_.find(parent);
  if (it == parents_.end()) return {};
  Parent& p = it->second;
  std::vector<RequestId> running;
  for (const RequestId& child : p.children) {
    const bool held = std::any_of(p.held.begin(), p.held.end(),
                                  [&](const ChildRequest& c) { return c.id == child; });
    if (!owner_.count(child)) continue;  // already finished
    if (!held) {
      running.push_back(child);
      continue;
    }
    RequestOutput out;
    out.id = parent;
    out.index = owner_.at(child).index;
    out.finished = true;
    out.finish_reason = FinishReason::Abort;
    finals.push_back(std::move(out));
    owner_.erase(child);
    --p.num_open;
  }
  p.held.clear();
  // The running children's abort deltas come back through to_parent and drop the parent.
  if (p.num_open == 0) parents_.erase(it);
  return running;
}

}  // namespace pagoda
