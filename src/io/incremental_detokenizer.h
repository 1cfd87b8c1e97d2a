// Streaming detokenization: ids arrive a few at a time and only text that no later id can
// change goes out (an incomplete UTF-8 or byte-fallback sequence waits for its end), so
// the deltas, after flush(), add up to tokenizer.decode(all ids) exactly. Each step
// decodes a small window of recent ids (vLLM's prefix_offset / read_offset), not the whole
// output.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "io/tokenizer.h"

namespace pagoda {

struct DetokenizeOptions {
  bool skip_special_tokens = true;
  // vLLM's fast-tokenizer path keeps the tokenizer's own spacing when this is on, and when
  // it is off only removes separators the decoder puts between added tokens. Our decoders
  // (byte-level, metaspace, byte fallback) never put any, so both values give decode()'s
  // text; it is accepted to mirror SamplingParams.
  bool spaces_between_special_tokens = true;
};

class IncrementalDetokenizer {
 public:
  // `tokenizer` must outlive this object.
  IncrementalDetokenizer(const Tokenizer& tokenizer, DetokenizeOptions options);

  // Appends ids; returns the text they made certain (often empty). Throws Error, and keeps
  // its state, when an id is outside the vocabulary.
  [[nodiscard]] std::string add(std::span<const int32_t> ids);
  // The text still held back (an incomplete sequence at the very end decodes as U+FFFD,
  // as in decode()). More ids may follow; they continue the same text.
  [[nodiscard]] std::string flush();

  [[nodiscard]] int64_t num_ids() const { return num_ids_; }
  // Ids decoded per step: stays small however long the output grows.
  [[nodiscard]] size_t window_size() const { return window_.size(); }

 private:
  [[nodiscard]] std::string decode_from(size_t begin) const;
  [[nodiscard]] size_t settled_length(const std::string& text) const;

  const Tokenizer& tokenizer_;
  DetokenizeOptions options_;
  std::vector<int32_t> window_;  // the ids from prefix_offset on
  // Ids of the window up to the last step that emitted all of its text: where the window
  // starts after the next step that emits everything (vLLM's read_offset).
  size_t read_offset_ = 0;
  size_t emitted_ = 0;  // bytes of decode(window_) already handed out
  int64_t num_ids_ = 0;
};

}  // namespace pagoda
