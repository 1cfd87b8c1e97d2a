// One /v1/completions or /v1/chat/completions request in flight: its engine requests (one
// per prompt, each with n choices), the readers of their output streams (run on the engine
// thread through the stream listeners, so nothing here blocks), and the answer they build,
// streamed as server-sent events or sent whole at the end. A client that goes away has its
// engine requests aborted.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "server/http_server.h"
#include "server/openai_format.h"
#include "server/metrics.h"

namespace pagoda::server {

using OJsonList = std::vector<OJson>;

enum class ApiKind { Completion, Chat };

// What the route handler decided; the prompts are already tokenized and checked.
struct GenerationPlan {
  struct Prompt {
    std::vector<int32_t> ids;
    std::string echo_text;  // completions' echo: written before the choice's text
  };
  ApiKind kind = ApiKind::Completion;
  std::string id;     // "cmpl-..." / "chatcmpl-..."; engine ids are id + "-" + prompt index
  std::string model;  // the served model name
  int64_t created = 0;
  bool stream = false;
  bool include_usage = false;
  std::optional<int> logprobs;  // completions: logprobs; chat: top_logprobs when logprobs is on
  std::vector<Prompt> prompts;
  SamplingParams params;
  std::chrono::steady_clock::time_point arrival = std::chrono::steady_clock::now();
};

struct GenerationHooks {
  std::function<void(const RequestTimes&)> on_finished;  // per engine request
  // Once per engine request, when its first output (or its end) arrives: it has left the
  // scheduler's queue. Gets the request's prompt length.
  std::function<void(int64_t num_prompt_tokens)> on_dequeued;
};

class Generation : public std::enable_shared_from_this<Generation> {
 public:
  // Adds the engine requests and starts answering. Throws Error (nothing left queued,
  // nothing answered) when the engine refuses a request.
  static void start(LLMEngine& engine, std::shared_ptr<http::HttpExchange> exchange, GenerationPlan plan,
                    GenerationHooks hooks);

  struct Choice {
    std::string text;  // non-streamed answers only
    OJsonList logprobs;
    CompletionLogprobs completion_logprobs;
    int64_t num_tokens = 0;
    bool started = false;
    bool finished = false;
    std::string finish_reason;
    std::string stop_reason;
  };
  struct Sub {
    RequestId engine_id;
    std::shared_ptr<OutputStream> stream;
    size_t first_choice = 0;
    int64_t num_prompt_tokens = 0;
    int num_open = 0;  // choices not finished yet
    bool dequeued = false;
    RequestTimes times;
    std::optional<std::chrono::steady_clock::time_point> last_token;
    std::vector<TokenLogprobs> prompt_logprobs;  // asked for, or echo with logprobs: for every choice
  };
  Generation(LLMEngine& engine, std::shared_ptr<http::HttpExchange> exchange, GenerationPlan plan,
             GenerationHooks hooks);
  ~Generation();

 private:
  void drain(size_t sub_index);
  void on_delta(Sub& sub, RequestOutput delta);
  void write_chunk_for(Choice& choice, const RequestOutput& delta, bool first, std::optional<OJson> echo_logprobs);
  void finish();
  void fail(const std::string& message);
  void abort_all();
  void release_streams();
  [[nodiscard]] std::string chunk_object() const;
  // The response's "prompt_logprobs" for one prompt: null unless the request asked.
  [[nodiscard]] OJson prompt_logprobs_of(size_t sub_index) const;

  LLMEngine& engine_;
  std::shared_ptr<http::HttpExchange> exchange_;
  GenerationPlan plan_;
  GenerationHooks hooks_;
  std::mutex mu_;
  std::vector<Sub> subs_;
  std::vector<Choice> choices_;
  bool done_ = false;
};

}  // namespace pagoda::server
