#include "sched/request.h"

#include <algorithm>

namespace pagoda {

Request::Request(RequestParams params, uint64_t arrival_seq)
    : id_(std::move(params.id)),
      all_tokens_(std::move(params.prompt_token_ids)),
      num_prompt_tokens_(static_cast<int>(all_tokens_.size())),
      max_tokens_(params.max_tokens),
      stop_token_ids_(std::move(params.stop_token_ids)),
      priority_(params.priority),
      arrival_seq_(arrival_seq),
      read_prefix_cache_(params.read_prefix_cache),
      extra_{std::move(params.cache_salt), 0} {}

std::span<const TokenId> Request::prompt_token_ids() const {
  return std::span(all_tokens_).first(static_cast<size_t>(num_prompt_tokens_));
}

std::span<const TokenId> Request::output_token_ids() const {
  return std::span(all_tokens_).subspan(static_cast<size_t>(num_prompt_tokens_));
}

bool Request::is_stop_token(TokenId t) const {
  return std::find(stop_token_ids_.begin(), stop_token_ids_.end(), t) != stop_token_ids_.end();
}

}  // namespace pagoda
