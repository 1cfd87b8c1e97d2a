// Stop strings over streamed text. The detokenizer appends each token's text delta; the
// checker says how much of the text may be emitted so far, holding back any suffix that
// could still grow into a stop string, so text past a stop is never streamed out.
// (Belongs with the output processor; it lives here beside the other sampling params.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagoda {

class StopChecker {
 public:
  struct Update {
    size_t emit_end = 0;  // text[0, emit_end) may be emitted; never decreases
    bool stopped = false;
    int stop_index = -1;  // which stop string, when stopped
  };

  // Throws Error on an empty stop string. Duplicates are allowed (the first index wins).
  StopChecker(std::span<const std::string> stops, bool include_stop_str_in_output);

  // delta is appended to the text seen so far. The generation stops at the first position
  // where any stop string ends (the longest one if several end there): that rule gives the
  // same answer however the text is split into deltas. When stopped, the output is
  // text[0, emit_end): up to the stop string's start, or its end with
  // include_stop_str_in_output. After a stop, further appends change nothing.
  Update append(std::string_view delta);

  // The generation ended otherwise (EOS, max_tokens): the held-back text may go out too.
  [[nodiscard]] size_t finish_emit_end() const { return stopped_ ? last_.emit_end : text_len_; }
  [[nodiscard]] size_t text_length() const { return text_len_; }

 private:
  // An Aho-Corasick automaton over the stop strings: its state after the text is the
  // longest suffix of the text that is a prefix of some stop string, which is exactly the
  // text to hold back, and each step costs amortized O(1) whatever the stop strings are.
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> next;
    int32_t fail = 0;
    int32_t depth = 0;
    int32_t stop = -1;    // index of the stop string ending here
    int32_t output = -1;  // nearest proper suffix node (via fail links) that ends a stop
  };
  [[nodiscard]] int32_t child(int32_t node, uint8_t byte) const;
  [[nodiscard]] int32_t step(int32_t node, uint8_t byte) const;

  std::vector<Node> nodes_;
  bool include_;
  int32_t state_ = 0;
  size_t text_len_ = 0;
  bool stopped_ = false;
  Update last_;
};

}  // namespace pagoda
