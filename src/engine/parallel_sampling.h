// Parallel sampling (n > 1) as vLLM v1 does it: a request with n choices becomes n child
// requests of n = 1 each (choice i seeded with seed + i when a seed is given, so each
// choice is reproducible as a request of its own), whose outputs are merged back under the
// parent's id with RequestOutput::index = i. The children share the prompt's KV blocks
// through the prefix cache: the first child computes the prompt, the others are held here
// until it has, and then find its blocks cached instead of computing the prompt again.
// The engine core owns one of these; nothing here touches the scheduler.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/request_output.h"
#include "sample/sampling_params.h"

namespace pagoda {

struct ChildRequest {
  RequestId id;
  std::vector<int32_t> prompt_ids;
  SamplingParams params;
  std::chrono::steady_clock::time_point arrival;  // the parent's, for queue times
};

// Choice `index` of `parent`: "<parent>#<index>".
[[nodiscard]] RequestId child_request_id(const RequestId& parent, int index);
// n = 1; seed + index when seeded; prompt logprobs only on choice 0 (they are the same for
// every choice, and scoring the prompt needs every prompt row computed).
[[nodiscard]] SamplingParams child_sampling_params(const SamplingParams& parent, int index);

class ParallelSampling {
 public:
  // Every id a request with `params.n` choices under `id` would take (the id itself for
  // n = 1), so the caller can refuse collisions before anything is added.
  [[nodiscard]] static std::vector<RequestId> ids_taken_by(const RequestId& id, int n);
  // True when this parent or any of its children (held or running) uses `id`.
  [[nodiscard]] bool reserves(const RequestId& id) const {
    return owner_.count(id) > 0 || parents_.count(id) > 0;
  }
  [[nodiscard]] bool is_parent(const RequestId& id) const { return parents_.count(id) > 0; }
  [[nodiscard]] int num_parents() const { return static_cast<int>(parents_.size()); }
  [[nodiscard]] int num_held_children() const;

  // Registers a parent of params.n > 1 choices; returns the children to add now. With
  // share_prompt the others wait until the first child has computed the prompt.
  [[nodiscard]] std::vector<ChildRequest> fan_out(const RequestId& parent,
                                                  std::vector<int32_t> prompt_ids,
                                                  const SamplingParams& params, bool share_prompt,
                                                  std::chrono::steady_clock::time_point arrival);

  // Rewrites a child's delta as the parent's (id, index); other requests' deltas pass
  // unchanged. Appends to `release` the held children that may start now (the first
  // child's first output: its prompt is computed and cached). Drops a parent once its
  // last choice has finished.
  void to_parent(RequestOutput& delta, std::vector<ChildRequest>& release);

  // Ends a parent: returns the ids of its children the core must abort, and appends the
  // final (Abort) deltas of its held children, already in the parent's terms, to `finals`.
  [[nodiscard]] std::vector<RequestId> abort(const RequestId& parent,
                                             std::vector<RequestOutput>& finals);

 private:
  struct Parent {
    int num_open = 0;                 // choices without a final delta yet
    std::vector<RequestId> children;  // every child id, by index
    std::vector<ChildRequest> held;   // not added to the core yet
  };
  struct Owner {
    RequestId parent;
    int index = 0;
  };

  std::unordered_map<RequestId, Parent> parents_;
  std::unordered_map<RequestId, Owner> owner_;  // child id -> its parent and index
};

}  // namespace pagoda
