// Internal to the BPE encoders: (left id, right id) -> (rank, merged id), the innermost
// lookup of ranked BPE, shared by the GGUF byte-level encoder and the tokenizer.json one.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace pagoda {

struct Merge {
  int32_t rank;
  int32_t result;
};

constexpr uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// Open addressing over (left id, right id) keys: the merge lookup is the innermost
// operation of BPE, and std::unordered_map's modulo and chains cost a third of the time.
class MergeTable {
 public:
  void build(const std::vector<std::pair<uint64_t, Merge>>& entries) {
    size_t capacity = 16;
    while (capacity < entries.size() * 2) capacity *= 2;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c /= 2) --shift_;
    keys_.assign(capacity, kEmpty);
    values_.assign(capacity, Merge{});
    for (const auto& [key, merge] : entries) {
      size_t i = slot(key);
      while (keys_[i] != kEmpty && keys_[i] != key) i = (i + 1) & (capacity - 1);
      if (keys_[i] == kEmpty) {  // the first (lowest-rank) merge of a pair wins
        keys_[i] = key;
        values_[i] = merge;
      }
    }
  }
  [[nodiscard]] const Merge* find(uint64_t key) const {
    const size_t mask = keys_.size() - 1;
    for (size_t i = slot(key);; i = (i + 1) & mask) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids are non-negative, so never a key
  [[nodiscard]] size_t slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  std::vector<uint64_t> keys_;
  std::vector<Merge> values_;
  int shift_ = 60;
};

}  // namespace pagoda
