#include "server/openai_format.h"

#include <chrono>
#include <random>

namespace pagoda::server {
namespace {

// OpenAI's floor for -inf logprobs, as vLLM clamps them.
double clamp_logprob(float lp) { return std::max(static_cast<double>(lp), -9999.0); }

OJson bytes_of(const std::string& text) {
  OJson bytes = OJson::array();
  for (const char c : text) bytes.push_back(static_cast<unsigned char>(c));
  return bytes;
}

}  // namespace

std::string make_request_id(const std::string& prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = prefix;
  for (int i = 0; i < 2; ++i) {
    uint64_t bits = rng();
    for (int j = 0; j < 16; ++j, bits >>= 4) id += kHex[bits & 15];
  }
  return id;
}

int64_t unix_time_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string token_text(const Tokenizer& tokenizer, int32_t id) {
  const int32_t ids[] = {id};
  return tokenizer.decode(ids, /*skip_special_tokens=*/false);
}

OJson usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return OJson{{"prompt_tokens", prompt_tokens},
               {"total_tokens", prompt_tokens + completion_tokens},
               {"completion_tokens", completion_tokens},
               {"prompt_tokens_details", nullptr}};
}

size_t utf8_code_points(const std::string& text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

OJson CompletionLogprobs::append(std::span<const TokenLogprobs> logprobs, int num_top, const Tokenizer& tokenizer) {
  OJson tokens = OJson::array(), token_logprobs = OJson::array(), top_logprobs = OJson::array(),
        text_offset = OJson::array();
  for (const TokenLogprobs& lp : logprobs) {
    const std::string token = token_text(tokenizer, lp.sampled.token);
    tokens.push_back(token);
    token_logprobs.push_back(clamp_logprob(lp.sampled.logprob));
    OJson top = OJson::object();
    top[token] = clamp_logprob(lp.sampled.logprob);
    for (size_t i = 0; i < lp.top.size() && static_cast<int>(i) < num_top; ++i) {
      const std::string t = token_text(tokenizer, lp.top[i].token);
      if (!top.contains(t)) top[t] = clamp_logprob(lp.top[i].logprob);
    }
    top_logprobs.push_back(std::move(top));
    text_offset.push_back(offset_);
    offset_ += utf8_code_points(token);
  }
  return OJson{{"text_offset", std::move(text_offset)},
               {"token_logprobs", std::move(token_logprobs)},
               {"tokens", std::move(tokens)},
               {"top_logprobs", std::move(top_logprobs)}};
}

OJson CompletionLogprobs::append_prompt(std::span<const int32_t> prompt_ids,
                                        std::span<const TokenLogprobs> prompt_logprobs, int num_top,
                                        const Tokenizer& tokenizer) {
  OJson lists{{"text_offset", OJson::array()},
              {"token_logprobs", OJson::array()},
              {"tokens", OJson::array()},
              {"top_logprobs", OJson::array()}};
  if (prompt_ids.empty()) return lists;
  const std::string first = token_text(tokenizer, prompt_ids[0]);
  lists["text_offset"].push_back(offset_);
  lists["token_logprobs"].push_back(nullptr);
  lists["tokens"].push_back(first);
  lists["top_logprobs"].push_back(nullptr);
  offset_ += utf8_code_points(first);
  const OJson rest = append(prompt_logprobs, num_top, tokenizer);
  for (auto it = rest.begin(); it != rest.end(); ++it) {
    for (const OJson& item : it.value()) lists[it.key()].push_back(item);
  }
  return lists;
}

OJson prompt_logprobs_json(std::span<const int32_t> prompt_ids,
                           std::span<const TokenLogprobs> prompt_logprobs,
                           const Tokenizer& tokenizer) {
  OJson list = OJson::array();
  if (prompt_ids.empty()) return list;
  list.push_back(nullptr);
  const auto entry = [&](const TokenLogprob& t) {
    return OJson{{"logprob", clamp_logprob(t.logprob)},
                 {"rank", t.rank},
                 {"decoded_token", token_text(tokenizer, t.token)}};
  };
  for (const TokenLogprobs& lp : prompt_logprobs) {
    OJson position = OJson::object();
    position[std::to_string(lp.sampled.token)] = entry(lp.sampled);
    for (const TokenLogprob& t : lp.top) {
      const std::string key = std::to_string(t.token);
      if (!position.contains(key)) position[key] = entry(t);
    }
    list.push_back(std::move(position));
  }
  return list;
}

OJson chat_logprobs_content(std::span<const TokenLogprobs> logprobs, int num_top, const Tokenizer& tokenizer) {
  OJson content = OJson::array();
  for (const TokenLogprobs& lp : logprobs) {
    const std::string token = token_text(tokenizer, lp.sampled.token);
    OJson top = OJson::array();
    for (size_t i = 0; i < lp.top.size() && static_cast<int>(i) < num_top; ++i) {
      const std::string t = token_text(tokenizer, lp.top[i].token);
      top.push_back(OJson{{"token", t}, {"logprob", clamp_logprob(lp.top[i].logprob)}, {"bytes", bytes_of(t)}});
    }
    content.push_back(OJson{{"token", token},
                            {"logprob", clamp_logprob(lp.sampled.logprob)},
                            {"bytes", bytes_of(token)},
                            {"top_logprobs", std::move(top)}});
  }
  return content;
}

std::string dump_json(const OJson& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string sse_event(const OJson& chunk) { return "data: " + dump_json(chunk) + "\n\n"; }

}  // namespace pagoda::server
