// The OpenAI request layer without HTTP or a model: body parsing limits, field types,
// the mapping onto SamplingParams and the error bodies, as vLLM's protocol defines them.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "server/openai_errors.h"
#include "server/openai_protocol.h"

namespace pagoda::server {
namespace {

using Json = nlohmann::json;

ProtocolLimits limits() {
  ProtocolLimits l;
  l.sampling.vocab_size = 1000;
  return l;
}

// The ApiError a call throws (status and param), or fails the test.
template <class F>
ApiError error_of(F&& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "no ApiError thrown";
  return ApiError(0, "");
}

CompletionRequest completion(const std::string& body) { return parse_completion_request(parse_request_body(body), limits()); }
ChatRequest chat(const std::string& body) { return parse_chat_request(parse_request_body(body), limits()); }

std::string nested(int depth) { return "{\"a\":" + std::string(depth, '[') + std::string(depth, ']') + "}"; }

TEST(OpenAiBody, RefusesWhatIsNotAJsonObject) {
  for (const std::string body : {"", "{", "{\"a\":1,}", "[1,2]", "\"text\"", "nul", "{\"a\":1} x"}) {
    EXPECT_EQ(error_of([&] { (void)parse_request_body(body); }).status(), 400) << body;
  }
  EXPECT_EQ(parse_request_body("{\"prompt\":\"hi\"}")["prompt"], "hi");
}

TEST(OpenAiBody, RefusesDeepNestingButNotModerateNesting) {
  EXPECT_NO_THROW((void)parse_request_body(nested(kMaxJsonDepth - 2)));
  EXPECT_EQ(error_of([&] { (void)parse_request_body(nested(kMaxJsonDepth + 1)); }).status(), 400);
  // Far deeper than any stack would like: refused at the limit, never built.
  EXPECT_EQ(error_of([&] { (void)parse_request_body(nested(1'000'000)); }).status(), 400);
}

TEST(OpenAiBody, RefusesInvalidUtf8RawOrEscaped) {
  EXPECT_EQ(error_of([] { (void)parse_request_body("{\"prompt\":\"a\xff" "b\"}"); }).status(), 400);
  EXPECT_EQ(error_of([] { (void)parse_request_body("{\"prompt\":\"\xc0\xaf\"}"); }).status(), 400);  // overlong
  EXPECT_EQ(error_of([] { (void)parse_request_body("{\"prompt\":\"\\ud800\"}"); }).status(), 400);   // lone surrogate
  EXPECT_EQ(parse_request_body("{\"prompt\":\"\\ud83d\\ude00\"}")["prompt"], "\xf0\x9f\x98\x80");
}

TEST(OpenAiBody, ErrorBodyIsVllmShaped) {
  const Json body = Json::parse(error_body(400, "temperature must be non-negative", "temperature"));
  EXPECT_EQ(body["error"]["message"], "temperature must be non-negative");
  EXPECT_EQ(body["error"]["type"], "BadRequestError");
  EXPECT_EQ(body["error"]["param"], "temperature");
  EXPECT_EQ(body["error"]["code"], 400);
  EXPECT_TRUE(Json::parse(error_body(404, "x"))["error"]["param"].is_null());
  EXPECT_EQ(Json::parse(error_body(404, "x"))["error"]["type"], "NotFoundError");
  // A message quoting bytes that are not UTF-8 still makes a valid body.
  Json parsed;
  EXPECT_NO_THROW(parsed = Json::parse(error_body(400, "bad \xff byte")));
}

TEST(OpenAiCompletions, MapsFieldsOntoSamplingParams) {
  const CompletionRequest r = completion(R"({"model":"m","prompt":"hi","max_tokens":5.0,"temperature":0.5,
      "top_p":0.9,"top_k":40,"min_p":0.1,"n":2,"seed":7,"stop":"\n","stop_token_ids":[3,4],
      "presence_penalty":0.5,"frequency_penalty":-0.5,"repetition_penalty":1.1,"logit_bias":{"12":150,"13":-3},
      "logprobs":3,"min_tokens":2,"ignore_eos":true,"skip_special_tokens":false,"include_stop_str_in_output":true,
      "bad_words":["x"],"allowed_token_ids":[1,2,3],"echo":true,"user":"ignored","unknown_field":{"a":1}})");
  const SamplingParams& p = r.params;
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(p.max_tokens, 5);
  EXPECT_TRUE(r.max_tokens_given);
  EXPECT_FLOAT_EQ(p.temperature, 0.5f);
  EXPECT_FLOAT_EQ(p.top_p, 0.9f);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_FLOAT_EQ(p.min_p, 0.1f);
  EXPECT_EQ(p.n, 2);
  EXPECT_EQ(p.seed, 7);
  EXPECT_EQ(p.stop, std::vector<std::string>{"\n"});
  EXPECT_EQ(p.stop_token_ids, (std::vector<int32_t>{3, 4}));
  EXPECT_FLOAT_EQ(p.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(p.repetition_penalty, 1.1f);
  EXPECT_FLOAT_EQ(p.logit_bias.at(12), kMaxLogitBias);  // clamped as OpenAI does
  EXPECT_FLOAT_EQ(p.logit_bias.at(13), -3.0f);
  EXPECT_EQ(p.logprobs, 3);
  EXPECT_EQ(p.prompt_logprobs, 3);  // echo with logprobs scores the prompt too
  EXPECT_EQ(p.min_tokens, 2);
  EXPECT_TRUE(p.ignore_eos);
  EXPECT_FALSE(p.skip_special_tokens);
  EXPECT_TRUE(p.include_stop_str_in_output);
  EXPECT_EQ(p.bad_words, std::vector<std::string>{"x"});
  EXPECT_EQ(p.allowed_token_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(r.echo);
}

TEST(OpenAiCompletions, DefaultsAreVllms) {
  const CompletionRequest r = completion(R"({"prompt":"hi","seed":-1})");
  EXPECT_EQ(r.params.max_tokens, 16);
  EXPECT_FALSE(r.max_tokens_given);
  EXPECT_FALSE(r.params.seed);  // -1 is "no seed"
  EXPECT_FALSE(r.params.logprobs);
  EXPECT_TRUE(r.add_special_tokens);
  EXPECT_FALSE(r.stream);
}

TEST(OpenAiCompletions, AcceptsEveryPromptShape) {
  EXPECT_EQ(*completion(R"({"prompt":"a"})").prompts.at(0).text, "a");
  const auto list = completion(R"({"prompt":["a","b"]})").prompts;
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(*list[1].text, "b");
  const auto ids = completion(R"({"prompt":[1,2,3]})").prompts;
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0].ids, (std::vector<int32_t>{1, 2, 3}));
  const auto batch = completion(R"({"prompt":[[1],[2,3]]})").prompts;
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[1].ids, (std::vector<int32_t>{2, 3}));
}

TEST(OpenAiCompletions, RefusesBadFieldsNamingThem) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "prompt"},
      {R"({"prompt":5})", "prompt"},
      {R"({"prompt":[]})", "prompt"},
      {R"({"prompt":["a",1]})", "prompt"},
      {R"({"prompt":[[1],[]]})", "prompt"},
      {R"({"prompt":[1,-2]})", "prompt"},
      {R"({"prompt":[1,2.5]})", "prompt"},
      {R"({"prompt":"a","temperature":"hot"})", "temperature"},
      {R"({"prompt":"a","n":1000000000000})", "n"},
      {R"({"prompt":"a","n":1.5})", "n"},
      {R"({"prompt":"a","max_tokens":1e300})", "max_tokens"},
      {R"({"prompt":"a","max_tokens":99999999999999999999})", "max_tokens"},
      {R"({"prompt":"a","stream":"yes"})", "stream"},
      {R"({"prompt":"a","stop":[1]})", "stop"},
      {R"({"prompt":"a","stop":{"a":1}})", "stop"},
      {R"({"prompt":"a","logit_bias":{"x":1}})", "logit_bias"},
      {R"({"prompt":"a","logit_bias":{"1":"big"}})", "logit_bias"},
      {R"({"prompt":"a","logit_bias":[1]})", "logit_bias"},
      {R"({"prompt":"a","logprobs":-1})", "logprobs"},
      {R"({"prompt":"a","logprobs":true,"x":1})", "logprobs"},
      {R"({"prompt":"a","stream_options":{"include_usage":true}})", "stream_options"},
      {R"({"prompt":"a","stream":true,"stream_options":1})", "stream_options"},
      {R"({"prompt":"a","stop_token_ids":"3"})", "stop_token_ids"},
      {R"({"prompt":"a","model":3})", "model"},
  };
  for (const auto& [body, param] : cases) {
    const ApiError e = error_of([&] { (void)completion(body); });
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_EQ(e.param(), param) << body << ": " << e.what();
  }
}

TEST(OpenAiCompletions, CapsTheNumberOfStopStrings) {
  Json body = {{"prompt", "a"}, {"stop", Json::array()}};
  for (size_t i = 0; i <= limits().sampling.max_stop; ++i) body["stop"].push_back(std::string(1, 's').append(std::to_string(i)));  // GCC 12: "s" + str trips -Wrestrict
  const ApiError e = error_of([&] { (void)parse_completion_request(body, limits()); });
  EXPECT_EQ(e.param(), "stop");
}

TEST(OpenAiChat, NormalizesMessages) {
  const ChatRequest r = chat(R"({"messages":[{"role":"system","content":"be brief"},
      {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
      {"role":"assistant","content":null,"tool_calls":[]}],"max_completion_tokens":9,"logprobs":true,"top_logprobs":2})");
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[1]["content"], "a\nb");  // vLLM joins text parts with newlines
  EXPECT_TRUE(r.messages[2]["content"].is_null());
  EXPECT_EQ(r.params.max_tokens, 9);
  EXPECT_EQ(r.params.logprobs, 2);
  EXPECT_TRUE(r.add_generation_prompt);
  EXPECT_FALSE(r.add_special_tokens);  // the template writes BOS
  EXPECT_FALSE(chat(R"({"messages":[{"role":"user","content":"x"}]})").params.max_tokens);
}

TEST(OpenAiChat, RefusesBadMessages) {
  const char* cases[] = {
      R"({})",
      R"({"messages":[]})",
      R"({"messages":"hi"})",
      R"({"messages":[1]})",
      R"({"messages":[{"content":"x"}]})",
      R"({"messages":[{"role":"wizard","content":"x"}]})",
      R"({"messages":[{"role":"user"}]})",
      R"({"messages":[{"role":"user","content":5}]})",
      R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})",
      R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})",
  };
  for (const char* body : cases) {
    const ApiError e = error_of([&] { (void)chat(body); });
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_EQ(e.param(), "messages") << body;
  }
  Json many = {{"messages", Json::array()}};
  for (size_t i = 0; i <= limits().max_messages; ++i) many["messages"].push_back({{"role", "user"}, {"content", "x"}});
  EXPECT_EQ(error_of([&] { (void)parse_chat_request(many, limits()); }).param(), "messages");
  EXPECT_EQ(error_of([] { (void)chat(R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":2})"); }).param(),
            "top_logprobs");
  EXPECT_EQ(error_of([] {
              (void)chat(R"({"messages":[{"role":"user","content":"x"}],"continue_final_message":true})");
            }).param(),
            "continue_final_message");
}

TEST(OpenAiTokenize, PromptOrMessages) {
  const TokenizeRequest p = parse_tokenize_request(parse_request_body(R"({"prompt":"hi"})"), limits());
  EXPECT_EQ(p.prompt, "hi");
  EXPECT_TRUE(p.add_special_tokens);
  const TokenizeRequest m =
      parse_tokenize_request(parse_request_body(R"({"messages":[{"role":"user","content":"x"}]})"), limits());
  ASSERT_TRUE(m.chat);
  EXPECT_FALSE(m.add_special_tokens);
  EXPECT_EQ(error_of([] { (void)parse_tokenize_request(Json::object(), limits()); }).status(), 400);
  EXPECT_EQ(parse_detokenize_request(Json{{"tokens", {1, 2}}}, limits()).tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(error_of([] { (void)parse_detokenize_request(Json{{"tokens", "1"}}, limits()); }).param(), "tokens");
}

TEST(OpenAiProtocol, FindsTheFieldAnEngineMessageIsAbout) {
  EXPECT_EQ(param_named_in("temperature must be non-negative, got -1."), "temperature");
  EXPECT_EQ(param_named_in("Requested logprobs (30) exceeds the maximum allowed value of 20."), "logprobs");
  EXPECT_EQ(param_named_in("request cmpl-ab12-0: n > 1 is not supported yet"), "n");
  EXPECT_EQ(param_named_in("something else entirely"), "");
}

}  // namespace
}  // namespace pagoda::server
