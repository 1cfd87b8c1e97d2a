// Finds the special tokens (control, user-defined, unknown) that a text spells and cuts
// the text around them before the model's tokenizer sees it. Same result as llama.cpp's
// tokenizer_st_partition: tokens are tried longest first, each over every text fragment
// left so far, leftmost occurrences first. A trie scan first finds which tokens occur at
// all, so the cost does not grow with the number of special tokens (Gemma has 6,414).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pagoda {

class SpecialTokenMatcher {
 public:
  struct Candidate {
    int32_t id;
    bool always;  // matched even when parse_special is off (user-defined tokens)
  };
  // `texts` is the whole vocabulary (indexed by id); it must outlive the matcher.
  SpecialTokenMatcher(const std::vector<std::string>& texts, std::vector<Candidate> candidates);

  struct Fragment {
    uint32_t begin = 0, end = 0;  // raw text [begin, end) when token < 0
    int32_t token = -1;
  };
  void partition(std::string_view text, bool parse_special, std::vector<Fragment>& out) const;

 private:
  struct Node {
    int32_t candidate = -1;  // index into candidates_ of the token ending here
    uint32_t first_edge = 0, n_edges = 0;
  };
  struct Edge {
    uint8_t byte;
    uint32_t node;
  };
  [[nodiscard]] uint32_t child(uint32_t node, uint8_t byte) const;

  const std::vector<std::string>& texts_;
  std::vector<Candidate> candidates_;  // in priority order: longest first, then lower id
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;  // each node's edges are contiguous and sorted by byte
};

}  // namespace pagoda
