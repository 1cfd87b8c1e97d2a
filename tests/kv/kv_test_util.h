// A minimal request for KV manager tests: tokens, computed count and extra keys, viewable
// as the KVRequest the manager borrows.
#pragma once

#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "kv/kv_cache_manager.h"

namespace pagoda::test {

struct FakeRequest {
  FakeRequest(std::string id_, std::vector<TokenId> tokens_, ExtraKeys extra_ = {})
      : id(std::move(id_)), tokens(std::move(tokens_)), extra(std::move(extra_)) {}

  std::string id;
  std::vector<TokenId> tokens;
  int num_computed_tokens = 0;
  ExtraKeys extra;

  [[nodiscard]] KVRequest view() const { return {id, tokens, num_computed_tokens, extra}; }
};

// Tokens first, first + 1, ..., first + n - 1.
inline std::vector<TokenId> iota_tokens(int n, TokenId first = 0) {
  std::vector<TokenId> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

inline std::vector<TokenId> concat(std::vector<TokenId> a, const std::vector<TokenId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace pagoda::test
