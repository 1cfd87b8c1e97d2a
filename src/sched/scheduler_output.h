// What one scheduling step hands the model runner: a diff against the runner's persistent
// batch. New requests come whole; requests it already has come with only what changed.
#pragma once

#include <unordered_map>
#include <vector>

#include "kv/types.h"
#include "sched/request.h"

namespace pagoda {

// A request the runner has not seen (first scheduled).
struct NewRequestData {
  RequestId id;
  std::vector<TokenId> prompt_token_ids;
  std::vector<BlockId> block_ids;
  int num_computed_tokens = 0;  // prefix-cache hit: KV already in block_ids
};

// A request the runner has (running), or had until it was preempted (resumed).
struct CachedRequestData {
  RequestId id;
  // The runner dropped a preempted request: then new_token_ids holds all its tokens
  // (prompt then outputs) and new_block_ids replaces its block table. Otherwise
  // new_token_ids is empty (the runner sampled those tokens itself) and new_block_ids are
  // appended.
  bool resumed_from_preemption = false;
  std::vector<TokenId> new_token_ids;
  std::vector<BlockId> new_block_ids;
  int num_computed_tokens = 0;  // before this step
};

struct SchedulerOutput {
  std::vector<NewRequestData> scheduled_new_reqs;
  std::vector<CachedRequestData> scheduled_cached_reqs;
  std::unordered_map<RequestId, int> num_scheduled_tokens;
  int total_num_scheduled_tokens = 0;
  // Finished (or aborted) since the previous step: the runner drops their state.
  std::vector<RequestId> finished_req_ids;
  // Preempted in this step: the runner drops their state too.
  std::vector<RequestId> preempted_req_ids;
};

// The runner's answer: sampled tokens per scheduled request. A request in the middle of
// its prefill has none.
using SampledTokens = std::unordered_map<RequestId, std::vector<TokenId>>;

struct FinishedRequest {
  RequestId id;
  RequestStatus status;
  friend bool operator==(const FinishedRequest&, const FinishedRequest&) = default;
};

}  // namespace pagoda
