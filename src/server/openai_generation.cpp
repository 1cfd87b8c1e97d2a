#include "server/openai_generation.h"

#include "server/openai_errors.h"

namespace pagoda::server {
namespace {

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

OJson reason_or_null(const std::string& s) { return s.empty() ? OJson(nullptr) : OJson(s); }

}  // namespace

Generation::Generation(LLMEngine& engine, std::shared_ptr<http::HttpExchange> exchange, GenerationPlan plan,
                       GenerationHooks hooks)
    : engine_(engine), exchange_(std::move(exchange)), plan_(std::move(plan)), hooks_(std::move(hooks)) {}

Generation::~Generation() = default;

void Generation::start(LLMEngine& engine, std::shared_ptr<http::HttpExchange> exchange, GenerationPlan plan,
                       GenerationHooks hooks) {
  auto g = std::make_shared<Generation>(engine, std::move(exchange), std::move(plan), std::move(hooks));
  const int n = g->plan_.params.n;
  g->choices_.resize(g->plan_.prompts.size() * static_cast<size_t>(n));
  for (size_t i = 0; i < g->plan_.prompts.size(); ++i) {
    Sub sub;
    sub.engine_id = g->plan_.id + "-" + std::to_string(i);
    sub.first_choice = i * static_cast<size_t>(n);
    sub.num_prompt_tokens = static_cast<int64_t>(g->plan_.prompts[i].ids.size());
    sub.num_open = n;
    sub.times.num_prompt_tokens = static_cast<int>(sub.num_prompt_tokens);
    try {
      sub.stream = engine.add_request(sub.engine_id, g->plan_.prompts[i].ids, g->plan_.params);
    } catch (const Error&) {
      g->abort_all();  // the prompts already queued
      throw;
    }
    g->subs_.push_back(std::move(sub));
  }
  if (g->plan_.stream) {
    g->exchange_->begin_stream(200, "text/event-stream", {{"cache-control", "no-cache"}});
    if (g->plan_.kind == ApiKind::Chat) {
      // OpenAI opens each choice with the role, before any content.
      for (size_t c = 0; c < g->choices_.size(); ++c) {
        OJson chunk = OJson::parse(g->chunk_object());
        chunk["choices"].push_back(OJson{{"index", c},
                                         {"delta", {{"role", "assistant"}, {"content", ""}}},
                                         {"logprobs", nullptr},
                                         {"finish_reason", nullptr}});
        g->exchange_->write(sse_event(chunk));
      }
    }
  }
  const std::weak_ptr<Generation> weak = g;
  g->exchange_->on_disconnect([weak] {
    if (auto self = weak.lock()) self->abort_all();
  });
  for (size_t i = 0; i < g->subs_.size(); ++i) {
    // The listener owns the generation until release_streams() drops it.
    g->subs_[i].stream->set_listener([g, i] { g->drain(i); });
  }
}

std::string Generation::chunk_object() const {
  const bool chat = plan_.kind == ApiKind::Chat;
  return dump_json(OJson{{"id", plan_.id},
                         {"object", chat ? "chat.completion.chunk" : "text_completion"},
                         {"created", plan_.created},
                         {"model", plan_.model},
                         {"choices", OJson::array()}});
}

void Generation::drain(size_t sub_index) {
  std::lock_guard lock(mu_);
  if (done_) return;
  Sub& sub = subs_[sub_index];
  try {
    while (auto delta = sub.stream->try_next()) on_delta(sub, std::move(*delta));
  } catch (const Error& e) {
    fail(e.what());
    return;
  }
  for (const Sub& s : subs_) {
    if (s.num_open > 0) return;
  }
  finish();
}

void Generation::on_delta(Sub& sub, RequestOutput delta) {
  const auto now = std::chrono::steady_clock::now();
  if (!sub.dequeued) {
    sub.dequeued = true;
    if (hooks_.on_dequeued) hooks_.on_dequeued(sub.num_prompt_tokens);
  }
  if (delta.queue_time_s) sub.times.queue_s = *delta.queue_time_s;
  if (!delta.token_ids.empty()) {
    if (!sub.last_token) {
      sub.times.ttft_s = seconds_between(plan_.arrival, now);
    } else {
      sub.times.itl_s.push_back(seconds_between(*sub.last_token, now));
    }
    sub.last_token = now;
    sub.times.num_generation_tokens += static_cast<int>(delta.token_ids.size());
  }
  const size_t index = sub.first_choice + static_cast<size_t>(delta.index);
  if (index >= choices_.size() || index < sub.first_choice) return;  // not one of ours
  Choice& choice = choices_[index];
  if (choice.finished) return;
  const bool first = !choice.started;
  choice.started = true;
  choice.num_tokens += static_cast<int64_t>(delta.token_ids.size());
  if (delta.finished) {
    choice.finished = true;
    choice.finish_reason = to_string(delta.finish_reason.value_or(FinishReason::Stop));
    choice.stop_reason = delta.stop_reason;
    --sub.num_open;
  }
  if (!delta.prompt_logprobs.empty()) sub.prompt_logprobs = delta.prompt_logprobs;  // choice 0 brings them
  std::optional<OJson> echo_logprobs;
  if (first && plan_.kind == ApiKind::Completion) {
    const GenerationPlan::Prompt& prompt = plan_.prompts[sub.first_choice / static_cast<size_t>(plan_.params.n)];
    const std::string& echo = prompt.echo_text;
    if (!echo.empty() && plan_.logprobs && plan_.params.prompt_logprobs) {
      // vLLM's echo with logprobs: the prompt's tokens and logprobs come first.
      choice.completion_logprobs = CompletionLogprobs(0);
      echo_logprobs = choice.completion_logprobs.append_prompt(prompt.ids, sub.prompt_logprobs, *plan_.logprobs,
                                                               engine_.tokenizer());
    } else {
      choice.completion_logprobs = CompletionLogprobs(utf8_code_points(echo));
    }
    delta.text = echo + delta.text;
  }
  if (plan_.stream) {
    write_chunk_for(choice, delta, first, echo_logprobs);
  } else {
    choice.text += delta.text;
    if (echo_logprobs) choice.logprobs.push_back(std::move(*echo_logprobs));
    if (plan_.logprobs) choice.logprobs.push_back(OJson::array());  // filled below
    if (plan_.logprobs) {
      choice.logprobs.back() = plan_.kind == ApiKind::Chat
                                   ? chat_logprobs_content(delta.logprobs, *plan_.logprobs, engine_.tokenizer())
                                   : choice.completion_logprobs.append(delta.logprobs, *plan_.logprobs,
                                                                       engine_.tokenizer());
    }
  }
  if (delta.finished && sub.num_open == 0) {
    sub.times.e2e_s = seconds_between(plan_.arrival, now);
    sub.times.finish_reason = choice.finish_reason;
    if (hooks_.on_finished) hooks_.on_finished(sub.times);
  }
}

void Generation::write_chunk_for(Choice& choice, const RequestOutput& delta, bool first,
                                 std::optional<OJson> echo_logprobs) {
  if (delta.text.empty() && delta.token_ids.empty() && !delta.finished && !first) return;
  if (delta.text.empty() && delta.token_ids.empty() && !delta.finished) return;
  const size_t index = static_cast<size_t>(&choice - choices_.data());
  OJson logprobs = nullptr;
  if (plan_.logprobs) {
    logprobs = plan_.kind == ApiKind::Chat
                   ? OJson{{"content", chat_logprobs_content(delta.logprobs, *plan_.logprobs, engine_.tokenizer())}}
                   : choice.completion_logprobs.append(delta.logprobs, *plan_.logprobs, engine_.tokenizer());
  }
  if (echo_logprobs) {  // the echoed prompt's entries go before the first tokens'
    for (auto it = logprobs.begin(); it != logprobs.end(); ++it) {
      for (OJson& item : it.value()) (*echo_logprobs)[it.key()].push_back(std::move(item));
    }
    logprobs = std::move(*echo_logprobs);
  }
  OJson entry = OJson::object();
  entry["index"] = index;
  if (plan_.kind == ApiKind::Chat) {
    entry["delta"] = delta.text.empty() ? OJson::object() : OJson{{"content", delta.text}};
  } else {
    entry["text"] = delta.text;
  }
  entry["logprobs"] = std::move(logprobs);
  entry["finish_reason"] = delta.finished ? OJson(choice.finish_reason) : OJson(nullptr);
  entry["stop_reason"] = delta.finished ? reason_or_null(choice.stop_reason) : OJson(nullptr);
  OJson chunk = OJson::parse(chunk_object());
  chunk["choices"].push_back(std::move(entry));
  exchange_->write(sse_event(chunk));
}

void Generation::finish() {
  done_ = true;
  int64_t num_prompt = 0, num_completion = 0;
  for (const Sub& s : subs_) num_prompt += s.num_prompt_tokens;
  for (const Choice& c : choices_) num_completion += c.num_tokens;
  const bool chat = plan_.kind == ApiKind::Chat;
  if (plan_.stream) {
    if (plan_.include_usage) {
      OJson chunk = OJson::parse(chunk_object());
      chunk["usage"] = usage_json(num_prompt, num_completion);
      exchange_->write(sse_event(chunk));
    }
    exchange_->write(kSseDone);
    exchange_->end_stream();
  } else {
    OJson choices = OJson::array();
    for (size_t i = 0; i < choices_.size(); ++i) {
      Choice& c = choices_[i];
      OJson entry = OJson::object();
      entry["index"] = i;
      OJson logprobs = nullptr;
      if (plan_.logprobs && chat) {
        logprobs = OJson{{"content", OJson::array()}};
        for (OJson& part : c.logprobs) {
          for (OJson& item : part) logprobs["content"].push_back(std::move(item));
        }
      } else if (plan_.logprobs) {
        logprobs = OJson{{"text_offset", OJson::array()}, {"token_logprobs", OJson::array()},
                         {"tokens", OJson::array()}, {"top_logprobs", OJson::array()}};
        for (OJson& part : c.logprobs) {
          for (auto it = part.begin(); it != part.end(); ++it) {
            for (OJson& item : it.value()) logprobs[it.key()].push_back(std::move(item));
          }
        }
      }
      if (chat) {
        entry["message"] = OJson{{"role", "assistant"}, {"content", c.text}, {"tool_calls", OJson::array()}};
      } else {
        entry["text"] = c.text;
      }
      entry["logprobs"] = std::move(logprobs);
      entry["finish_reason"] = c.finish_reason;
      entry["stop_reason"] = reason_or_null(c.stop_reason);
      // vLLM puts them on each completion choice, and once on a chat response.
      if (!chat) entry["prompt_logprobs"] = prompt_logprobs_of(i / static_cast<size_t>(plan_.params.n));
      choices.push_back(std::move(entry));
    }
    OJson body{{"id", plan_.id},
               {"object", chat ? "chat.completion" : "text_completion"},
               {"created", plan_.created},
               {"model", plan_.model},
               {"choices", std::move(choices)},
               {"usage", usage_json(num_prompt, num_completion)}};
    if (chat) body["prompt_logprobs"] = prompt_logprobs_of(0);
    exchange_->respond(http::HttpResponse{200, "application/json", dump_json(body), {}});
  }
  release_streams();
}

OJson Generation::prompt_logprobs_of(size_t sub_index) const {
  if (!plan_.params.prompt_logprobs) return nullptr;
  return prompt_logprobs_json(plan_.prompts[sub_index].ids, subs_[sub_index].prompt_logprobs, engine_.tokenizer());
}

void Generation::fail(const std::string& message) {
  done_ = true;
  abort_all();
  for (Sub& s : subs_) {
    if (!s.dequeued && hooks_.on_dequeued) hooks_.on_dequeued(s.num_prompt_tokens);
    s.dequeued = true;
  }
  if (plan_.stream) {
    exchange_->write("data: " + error_body(500, message) + "\n\n");
    exchange_->write(kSseDone);
    exchange_->end_stream();
  } else {
    exchange_->respond(http::HttpResponse{500, "application/json", error_body(500, message), {}});
  }
  release_streams();
}

void Generation::abort_all() {
  for (const Sub& s : subs_) engine_.abort(s.engine_id);
}

void Generation::release_streams() {
  // Breaks the stream -> listener -> generation cycle; the caller's listener copy keeps
  // this object alive until it returns.
  for (Sub& s : subs_) s.stream->set_listener(nullptr);
}

}  // namespace pagoda::server
