// The response side of the OpenAI API as vLLM writes it: ids, usage, logprobs in both
// formats (completions' parallel lists with text offsets; chat's content list with bytes)
// and the server-sent-event framing of streamed chunks.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "io/tokenizer.h"
#include "sample/logprobs.h"

namespace pagoda::server {

using OJson = nlohmann::ordered_json;

// "cmpl-" / "chatcmpl-" followed by 32 random hex digits.
[[nodiscard]] std::string make_request_id(const std::string& prefix);
[[nodiscard]] int64_t unix_time_now();

// One token as text, special tokens written out (what vLLM shows in logprobs).
[[nodiscard]] std::string token_text(const Tokenizer& tokenizer, int32_t id);

[[nodiscard]] OJson usage_json(int64_t prompt_tokens, int64_t completion_tokens);

// Completions logprobs {"tokens", "token_logprobs", "top_logprobs", "text_offset"} for one
// choice, built delta by delta: text offsets run on across appends, in code points as
// Python counts them, from the offset of the first token (after an echoed prompt).
class CompletionLogprobs {
 public:
  explicit CompletionLogprobs(size_t initial_offset = 0) : offset_(initial_offset) {}
  // The lists for these tokens; num_top as the request's logprobs (the sampled token
  // comes first in each top_logprobs dict, as in vLLM, then the top num_top).
  [[nodiscard]] OJson append(std::span<const TokenLogprobs> logprobs, int num_top, const Tokenizer& tokenizer);
  // The echoed prompt's lists (echo with logprobs, as vLLM): prompt token 0 has no logprob
  // (null entries), the others come from the engine's prompt_logprobs.
  [[nodiscard]] OJson append_prompt(std::span<const int32_t> prompt_ids, std::span<const TokenLogprobs> prompt_logprobs,
                                    int num_top, const Tokenizer& tokenizer);

 private:
  size_t offset_;
};

// vLLM's "prompt_logprobs" list: null for prompt token 0 (no prefix scores it), then per
// prompt token {"<id>": {"logprob", "rank", "decoded_token"}}, the prompt token's own entry
// first, then the top ones; prompt_logprobs holds one per prompt token from the second on.
[[nodiscard]] OJson prompt_logprobs_json(std::span<const int32_t> prompt_ids,
                                         std::span<const TokenLogprobs> prompt_logprobs,
                                         const Tokenizer& tokenizer);

// Chat logprobs' "content" entries: {"token", "logprob", "bytes", "top_logprobs": [...]}.
[[nodiscard]] OJson chat_logprobs_content(std::span<const TokenLogprobs> logprobs, int num_top,
                                          const Tokenizer& tokenizer);

// "data: {json}\n\n"; and the stream's final line.
[[nodiscard]] std::string sse_event(const OJson& chunk);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";
// JSON text; invalid UTF-8 (never expected) becomes U+FFFD rather than throwing.
[[nodiscard]] std::string dump_json(const OJson& value);

[[nodiscard]] size_t utf8_code_points(const std::string& text);

}  // namespace pagoda::server
