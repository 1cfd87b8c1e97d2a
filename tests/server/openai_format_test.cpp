// Response formatting without a model: logprobs in both OpenAI formats over a toy
// vocabulary, SSE framing, ids and usage; and the admission counter.
#include <gtest/gtest.h>

#include <map>

#include "server/admission_control.h"
#include "server/openai_format.h"

namespace pagoda::server {
namespace {

// Token i is words[i]; decoding concatenates.
class ToyTokenizer : public Tokenizer {
 public:
  std::vector<std::string> words = {"<s>", "h\xc3\xa9", "llo", " w\xf0\x9f\x98\x80", "!"};
  std::vector<int32_t> encode(std::string_view, bool, bool) const override { return {}; }
  std::string decode(std::span<const int32_t> ids, bool) const override {
    std::string s;
    for (int32_t id : ids) s += words.at(static_cast<size_t>(id));
    return s;
  }
  int vocab_size() const override { return static_cast<int>(words.size()); }
  int32_t bos_id() const override { return 0; }
  int32_t eos_id() const override { return -1; }
  bool is_end_of_generation(int32_t) const override { return false; }
};

TokenLogprobs lp(int32_t token, float logprob, std::vector<TokenLogprob> top) {
  return TokenLogprobs{TokenLogprob{token, logprob, 1}, std::move(top)};
}

TEST(OpenAiFormat, CompletionLogprobsRunTextOffsetsInCodePointsAcrossDeltas) {
  const ToyTokenizer tok;
  CompletionLogprobs builder(/*initial_offset=*/3);  // after an echoed 3-character prompt
  const std::vector<TokenLogprobs> first = {lp(1, -0.5f, {{2, -0.1f, 1}, {1, -0.5f, 2}}), lp(2, -1.0f, {})};
  const OJson a = builder.append(first, 2, tok);
  EXPECT_EQ(a["tokens"], (OJson{"h\xc3\xa9", "llo"}));
  EXPECT_EQ(a["text_offset"], (OJson{3, 5}));  // "hé" is 2 code points (3 bytes)
  EXPECT_DOUBLE_EQ(a["token_logprobs"][0].get<double>(), -0.5);
  // The sampled token first, then the top ones; a token in both appears once.
  const OJson& top0 = a["top_logprobs"][0];
  ASSERT_EQ(top0.size(), 2u);
  EXPECT_EQ(top0.begin().key(), "h\xc3\xa9");
  EXPECT_DOUBLE_EQ(top0["llo"].get<double>(), static_cast<double>(-0.1f));
  const OJson b = builder.append(std::vector<TokenLogprobs>{lp(3, -std::numeric_limits<float>::infinity(), {})}, 0, tok);
  EXPECT_EQ(b["text_offset"], (OJson{8}));
  EXPECT_DOUBLE_EQ(b["token_logprobs"][0].get<double>(), -9999.0);  // OpenAI's floor for -inf
}

TEST(OpenAiFormat, ChatLogprobsCarryBytesAndTopN) {
  const ToyTokenizer tok;
  const OJson c = chat_logprobs_content(std::vector<TokenLogprobs>{lp(3, -0.25f, {{3, -0.25f, 1}, {4, -2.0f, 2}})}, 1, tok);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["token"], " w\xf0\x9f\x98\x80");
  EXPECT_EQ(c[0]["bytes"], (OJson{32, 119, 240, 159, 152, 128}));
  ASSERT_EQ(c[0]["top_logprobs"].size(), 1u);
  EXPECT_EQ(c[0]["top_logprobs"][0]["token"], " w\xf0\x9f\x98\x80");
  EXPECT_EQ(c[0]["top_logprobs"][0]["bytes"].size(), 6u);
}

TEST(OpenAiFormat, SseFramingIdsAndUsage) {
  EXPECT_EQ(sse_event(OJson{{"a", 1}}), "data: {\"a\":1}\n\n");
  EXPECT_STREQ(kSseDone, "data: [DONE]\n\n");
  const std::string id = make_request_id("chatcmpl-");
  ASSERT_EQ(id.size(), 9u + 32u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 9), std::string::npos);
  EXPECT_NE(id, make_request_id("chatcmpl-"));
  const OJson u = usage_json(7, 5);
  EXPECT_EQ(u["total_tokens"], 12);
  EXPECT_EQ(u["prompt_tokens"], 7);
  EXPECT_EQ(u["completion_tokens"], 5);
}

TEST(AdmissionControl, CountsQueuedRequestsAndTokens) {
  AdmissionControl a(/*max_requests=*/2, /*max_tokens=*/100);
  EXPECT_TRUE(a.try_admit(1, 500));   // an empty queue takes even an oversized prompt
  EXPECT_FALSE(a.try_admit(1, 10));   // now the token limit holds
  a.release(1, 500);
  EXPECT_TRUE(a.try_admit(1, 40));
  EXPECT_TRUE(a.try_admit(1, 40));
  EXPECT_FALSE(a.try_admit(1, 1));    // the request limit
  a.release(1, 40);
  EXPECT_TRUE(a.try_admit(1, 60));
  EXPECT_EQ(a.num_queued_requests(), 2);
  AdmissionControl unlimited(0, 0);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(unlimited.try_admit(3, 1 << 20));
}

}  // namespace
}  // namespace pagoda::server
