// A generation request as the scheduler tracks it: the caller's parameters, the tokens so
// far (prompt then outputs) and how many of them have KV computed. Sampling itself and
// stop strings belong to the layers above; this only knows token ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kv/block_hash.h"
#include "kv/kv_cache_manager.h"
#include "sched/request_status.h"

namespace pagoda {

using RequestId = std::string;

// What the caller asks for; Scheduler::add_request validates it.
struct RequestParams {
  RequestId id;
  std::vector<TokenId> prompt_token_ids;
  int max_tokens = 16;                  // generated tokens at most, >= 1
  std::vector<TokenId> stop_token_ids;  // e.g. the model's EOS ids; the stop token is kept
  int priority = 0;                     // priority policy: smaller runs first
  std::string cache_salt;               // prefix-cache sharing only within equal salts
  // False when every prompt token must be computed, e.g. for prompt logprobs (which need
  // the logits of every prompt position); its blocks are still cached for others.
  bool read_prefix_cache = true;
};

class Request {
 public:
  Request(RequestParams params, uint64_t arrival_seq);

  [[nodiscard]] const RequestId& id() const { return id_; }
  [[nodiscard]] int priority() const { return priority_; }
  [[nodiscard]] uint64_t arrival_seq() const { return arrival_seq_; }
  [[nodiscard]] int max_tokens() const { return max_tokens_; }

  [[nodiscard]] const std::vector<TokenId>& all_token_ids() const { return all_tokens_; }
  [[nodiscard]] std::span<const TokenId> prompt_token_ids() const;
  [[nodiscard]] std::span<const TokenId> output_token_ids() const;
  [[nodiscard]] int num_tokens() const { return static_cast<int>(all_tokens_.size()); }
  [[nodiscard]] int num_prompt_tokens() const { return num_prompt_tokens_; }
  [[nodiscard]] int num_output_tokens() const { return num_tokens() - num_prompt_tokens_; }
  [[nodiscard]] bool is_stop_token(TokenId t) const;
  [[nodiscard]] bool reads_prefix_cache() const { return read_prefix_cache_; }

  void append_output_token(TokenId t) { all_tokens_.push_back(t); }

  // The borrowed view the KV manager works on.
  [[nodiscard]] KVRequest kv_view() const {
    return {id_, all_tokens_, num_computed_tokens, extra_};
  }

  RequestStatus status = RequestStatus::Waiting;
  int num_computed_tokens = 0;  // tokens with KV in the cache; <= num_tokens() + placeholders
  // Async scheduling: tokens scheduled to be sampled whose ids have not come back yet (at
  // most 2: one in the step computing, one in the step just scheduled after it).
  int num_output_placeholders = 0;
  int num_preemptions = 0;

 private:
  RequestId id_;
  std::vector<TokenId> all_tokens_;
  int num_prompt_tokens_;
  int max_tokens_;
  std::vector<TokenId> stop_token_ids_;
  int priority_;
  uint64_t arrival_seq_;
  bool read_prefix_cache_;
  ExtraKeys extra_;
};

}  // namespace pagoda
