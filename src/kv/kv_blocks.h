// The KV manager's opaque answer to the scheduler: a list of block ids the scheduler may
// read (to build block tables) and hand back, but never make up itself, so free lists and
// ref counts stay private to the KV manager.
#pragma once

#include <cstddef>
#include <vector>

#include "kv/types.h"

namespace pagoda {

class KVBlocks {
 public:
  KVBlocks() = default;

  [[nodiscard]] const std::vector<BlockId>& ids() const { return ids_; }
  [[nodiscard]] size_t size() const { return ids_.size(); }
  [[nodiscard]] bool empty() const { return ids_.empty(); }

 private:
  friend class KVCacheManager;
  explicit KVBlocks(std::vector<BlockId> ids) : ids_(std::move(ids)) {}

  std::vector<BlockId> ids_;
};

}  // namespace pagoda
