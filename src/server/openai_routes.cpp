#include "server/openai_routes.h"

#include <sstream>

#include "server/openai_errors.h"
#include "server/openai_format.h"
#include "server/openai_generation.h"

namespace pagoda::server {
namespace {

using Json = nlohmann::json;

http::HttpResponse json_response(const OJson& body, int status = 200) {
  return http::HttpResponse{status, "application/json", dump_json(body), {}};
}

// vLLM's wording, so clients that parse it keep working.
void check_context(const ServerContext& ctx, int64_t num_prompt, const GenerationRequest& r) {
  const int64_t max_len = ctx.engine.config().max_model_len;
  const char* param = r.max_tokens_given ? "max_tokens" : "";
  if (r.params.max_tokens && (r.max_tokens_given || num_prompt < max_len)) {
    const int64_t completion = *r.params.max_tokens;
    if (completion >= 1 && num_prompt + completion > max_len) {
      std::ostringstream m;
      m << "This model's maximum context length is " << max_len << " tokens. However, you requested "
        << num_prompt + completion << " tokens (" << num_prompt << " in the messages, " << completion
        << " in the completion). Please reduce the length of the messages or completion.";
      bad_request(m.str(), param);
    }
  }
  if (num_prompt >= max_len) {
    std::ostringstream m;
    m << "This model's maximum context length is " << max_len << " tokens. However, your request has " << num_prompt
      << " input tokens. Please reduce the length of the input messages.";
    bad_request(m.str(), "");
  }
}

std::vector<int32_t> encode_chat(const ServerContext& ctx, const ChatRequest& r) {
  const std::string text = ctx.chat_template.render(r);
  // The template writes BOS and the turn markers itself.
  return ctx.engine.tokenizer().encode(text, r.add_special_tokens, /*parse_special=*/true);
}

// What both endpoints fill the same way: the ids, the served name, the clock, streaming.
GenerationPlan plan_header(const ServerContext& ctx, ApiKind kind, const GenerationRequest& r) {
  GenerationPlan plan;
  plan.kind = kind;
  plan.id = make_request_id(kind == ApiKind::Chat ? "chatcmpl-" : "cmpl-");
  plan.model = ctx.served_name();
  plan.created = unix_time_now();
  plan.stream = r.stream;
  plan.include_usage = r.include_usage;
  return plan;
}

void start_generation(ServerContext& ctx, const std::shared_ptr<http::HttpExchange>& exchange, GenerationPlan plan) {
  int64_t num_tokens = 0;
  for (const auto& p : plan.prompts) num_tokens += static_cast<int64_t>(p.ids.size());
  const auto num_requests = static_cast<int64_t>(plan.prompts.size());
  std::shared_ptr<AdmissionControl> admission = ctx.admission;
  if (!admission->try_admit(num_requests, num_tokens)) {
    throw ApiError(429, "The server's queue is full (--max-num-queued-requests / --max-num-queued-tokens); "
                        "retry later.");
  }
  GenerationHooks hooks;
  ServerMetrics metrics = ctx.metrics;  // shares the implementation
  hooks.on_finished = [metrics](const RequestTimes& t) mutable { metrics.record(t); };
  hooks.on_dequeued = [admission](int64_t n) { admission->release(1, n); };
  try {
    Generation::start(ctx.engine, exchange, std::move(plan), std::move(hooks));
  } catch (const Error& e) {
    // Nothing stays queued when the engine refuses; the counts go back whole.
    admission->release(num_requests, num_tokens);
    throw ApiError(400, e.what(), param_named_in(e.what()));
  }
}

}  // namespace

ServerContext::ServerContext(LLMEngine& e, ApiServerOptions o)
    : engine(e),
      options(std::move(o)),
      chat_template(ChatTemplate::from_model(options.model_path)),
      metrics(options.served_model_names.empty() ? options.model_path : options.served_model_names.front()),
      admission(std::make_shared<AdmissionControl>(options.max_num_queued_requests, options.max_num_queued_tokens)),
      created(unix_time_now()) {
  if (options.served_model_names.empty()) options.served_model_names.push_back(options.model_path);
  options.limits.sampling.vocab_size = engine.tokenizer().vocab_size();
}

void ServerContext::check_model(const std::optional<std::string>& model) const {
  if (!model) return;
  for (const std::string& name : options.served_model_names) {
    if (*model == name) return;
  }
  throw ApiError(404, "The model `" + *model + "` does not exist.", "model");
}

void handle_completions(ServerContext& ctx, const std::shared_ptr<http::HttpExchange>& exchange, const Json& body) {
  CompletionRequest r = parse_completion_request(body, ctx.options.limits);
  ctx.check_model(r.model);
  const Tokenizer& tok = ctx.engine.tokenizer();
  GenerationPlan plan = plan_header(ctx, ApiKind::Completion, r);
  plan.logprobs = r.params.logprobs;
  for (PromptInput& p : r.prompts) {
    GenerationPlan::Prompt prompt;
    prompt.ids = p.text ? tok.encode(*p.text, r.add_special_tokens, /*parse_special=*/false) : std::move(p.ids);
    if (prompt.ids.empty()) bad_request("The prompt is empty.", "prompt");
    for (const int32_t id : prompt.ids) {
      if (id >= tok.vocab_size()) bad_request("Token id " + std::to_string(id) + " is out of vocabulary", "prompt");
    }
    check_context(ctx, static_cast<int64_t>(prompt.ids.size()), r);
    if (r.echo) prompt.echo_text = p.text ? *p.text : tok.decode(prompt.ids, /*skip_special_tokens=*/false);
    plan.prompts.push_back(std::move(prompt));
  }
  plan.params = std::move(r.params);
  start_generation(ctx, exchange, std::move(plan));
}

void handle_chat_completions(ServerContext& ctx, const std::shared_ptr<http::HttpExchange>& exchange,
                             const Json& body) {
  ChatRequest r = parse_chat_request(body, ctx.options.limits);
  ctx.check_model(r.model);
  GenerationPlan plan = plan_header(ctx, ApiKind::Chat, r);
  if (r.logprobs) plan.logprobs = r.top_logprobs;
  GenerationPlan::Prompt prompt;
  prompt.ids = encode_chat(ctx, r);
  if (prompt.ids.empty()) bad_request("The rendered chat prompt is empty.", "messages");
  check_context(ctx, static_cast<int64_t>(prompt.ids.size()), r);
  plan.prompts.push_back(std::move(prompt));
  plan.params = std::move(r.params);
  start_generation(ctx, exchange, std::move(plan));
}

http::HttpResponse handle_models(const ServerContext& ctx) {
  OJson data = OJson::array();
  for (const std::string& name : ctx.options.served_model_names) {
    data.push_back(OJson{{"id", name},
                         {"object", "model"},
                         {"created", ctx.created},
                         {"owned_by", "pagoda"},
                         {"root", ctx.options.model_path},
                         {"parent", nullptr},
                         {"max_model_len", ctx.engine.config().max_model_len},
                         {"permission", OJson::array()}});
  }
  return json_response(OJson{{"object", "list"}, {"data", std::move(data)}});
}

http::HttpResponse handle_tokenize(const ServerContext& ctx, const Json& body) {
  const TokenizeRequest r = parse_tokenize_request(body, ctx.options.limits);
  ctx.check_model(r.model);
  const Tokenizer& tok = ctx.engine.tokenizer();
  const std::vector<int32_t> ids =
      r.chat ? encode_chat(ctx, *r.chat) : tok.encode(*r.prompt, r.add_special_tokens, /*parse_special=*/false);
  OJson out{{"count", ids.size()}, {"max_model_len", ctx.engine.config().max_model_len}, {"tokens", ids}};
  if (r.return_token_strs) {
    OJson strs = OJson::array();
    for (const int32_t id : ids) strs.push_back(token_text(tok, id));
    out["token_strs"] = std::move(strs);
  } else {
    out["token_strs"] = nullptr;
  }
  return json_response(out);
}

http::HttpResponse handle_detokenize(const ServerContext& ctx, const Json& body) {
  const DetokenizeRequest r = parse_detokenize_request(body, ctx.options.limits);
  ctx.check_model(r.model);
  const Tokenizer& tok = ctx.engine.tokenizer();
  for (const int32_t id : r.tokens) {
    if (id >= tok.vocab_size()) bad_request("Token id " + std::to_string(id) + " is out of vocabulary", "tokens");
  }
  return json_response(OJson{{"prompt", tok.decode(r.tokens, /*skip_special_tokens=*/false)}});
}

}  // namespace pagoda::server
