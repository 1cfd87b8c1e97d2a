#include "io/incremental_detokenizer.h"

#include <algorithm>
#include <string_view>

#include "core/error.h"

namespace pagoda {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer,
                                               DetokenizeOptions options)
    : tokenizer_(tokenizer), options_(options) {}

std::string IncrementalDetokenizer::decode_from(size_t begin) const {
  const std::span<const int32_t> ids(window_);
  return tokenizer_.decode(ids.subspan(begin), options_.skip_special_tokens);
}

size_t IncrementalDetokenizer::settled_length(const std::string& text) const {
  // A trailing U+FFFD may be the start of a character whose other bytes are still to come,
  // and decoders differ in how many U+FFFD an unfinished sequence shows as (one per
  // maximal subpart; Hugging Face's ByteFallback gives one per byte token): the whole run
  // waits, as in vLLM. A real one goes out with the next character, or at flush. The
  // tokenizer names what else may change (a trailing run of byte-fallback tokens, even a
  // valid one, decodes anew with each byte token added to it).
  std::string_view settled = text;
  while (ends_with(settled, kReplacement)) settled.remove_suffix(kReplacement.size());
  const size_t unsettled =
      std::min(tokenizer_.num_unsettled_tail_bytes(window_, text, options_.skip_special_tokens),
               text.size());
  return std::min(settled.size(), text.size() - unsettled);
}

std::string IncrementalDetokenizer::add(std::span<const int32_t> ids) {
  const int vocab = tokenizer_.vocab_size();
  for (const int32_t id : ids) {
    if (id < 0 || id >= vocab) {
      fail("detokenizer: token id ", id, " is outside the vocabulary (", vocab, " ids)");
    }
  }
  window_.insert(window_.end(), ids.begin(), ids.end());
  num_ids_ += static_cast<int64_t>(ids.size());

  const std::string text = decode_from(0);
  const size_t settled = settled_length(text);
  std::string delta;
  if (settled > emitted_) {
    delta = text.substr(emitted_, settled - emitted_);
    emitted_ = settled;
  }
  if (settled < text.size()) return delta;  // the window keeps its start until all is out

  // Everything is out: the window may now start at read_offset_, one step back, so the next
  // decode still sees the ids before the new ones (a byte-fallback sequence, a SentencePiece
  // word start). The move is taken only where decode() of the shorter window is exactly the
  // end of this text and not empty: then decode-at-text-start effects (a stripped leading
  // space) already happened in emitted text, and a later id cannot tell the two apart.
  if (read_offset_ > 0) {
    const std::string rest = decode_from(read_offset_);
    if (!rest.empty() && ends_with(text, rest)) {
      window_.erase(window_.begin(), window_.begin() + static_cast<std::ptrdiff_t>(read_offset_));
      emitted_ = rest.size();
    }
  }
  read_offset_ = window_.size();
  return delta;
}

std::string IncrementalDetokenizer::flush() {
  const std::string text = decode_from(0);
  if (text.size() <= emitted_) return {};
  std::string rest = text.substr(emitted_);
  emitted_ = text.size();
  return rest;
}

}  // namespace pagoda
