// pagoda bench serve --base-url URL [--endpoint /v1/completions|/v1/chat/completions]
//   --dataset random --random-input-len L --random-output-len O --num-prompts N
//   [--request-rate R (inf)] [--max-concurrency C] [--seed S] [--model NAME]
//   [--tokenizer PATH] [--percentiles 99] [--output-json FILE]
// The online benchmark of `vllm bench serve` against any OpenAI-compatible server: every
// request streams with ignore_eos and max_tokens O, arrivals are a Poisson process of
// rate R, at most C are in flight, and the summary is computed as vLLM computes it.
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/bench_serve.h"
#include "cli/http_client.h"
#include "cli/open_tokenizer.h"
#include "cli/serve_metrics.h"
#include "core/error.h"

namespace pagoda::cli {

namespace {

struct Prompt {
  std::string text;
  int num_tokens = 0;  // by our tokenizer, without special tokens
};

// vLLM's random dataset: random token ids decoded to text. Decoding and re-encoding
// does not round-trip, so (like vLLM's gen_prompt_decode_to_target_len) the ids are cut
// or topped up with more random ids until the text re-encodes to `len` tokens, for at
// most ten rounds.
std::vector<Prompt> random_prompts(const Tokenizer& tok, int num, int len, std::mt19937_64& rng) {
  std::uniform_int_distribution<int32_t> pick(0, tok.vocab_size() - 1);
  std::vector<Prompt> prompts;
  for (int r = 0; r < num; ++r) {
    std::vector<int32_t> ids(static_cast<size_t>(len));
    for (auto& id : ids) id = pick(rng);
    Prompt p;
    for (int round = 0; round < 10; ++round) {
      p.text = tok.decode(ids, true);
      ids = tok.encode(p.text, false, false);
      if (static_cast<int>(ids.size()) == len) break;
      if (static_cast<int>(ids.size()) > len) ids.resize(static_cast<size_t>(len));
      while (static_cast<int>(ids.size()) < len) ids.push_back(pick(rng));
    }
    p.num_tokens = static_cast<int>(tok.encode(p.text, false, false).size());
    prompts.push_back(std::move(p));
  }
  return prompts;
}

// vLLM's get_request: exponential gaps (a Poisson process), rescaled so that the last
// request is due at exactly N / rate; all at once for an infinite rate.
std::vector<double> poisson_send_times(int num, double rate, std::mt19937_64& rng) {
  std::vector<double> at(static_cast<size_t>(num), 0.0);
  if (std::isinf(rate)) return at;
  std::exponential_distribution<double> gap(rate);
  double t = 0;
  for (auto& a : at) a = (t += gap(rng));
  const double scale = (num / rate) / at.back();
  for (auto& a : at) a *= scale;
  return at;
}

// The request bodies vllm bench sends (openai / openai-chat backends).
std::string request_body(bool chat, const std::string& model, const std::string& prompt, int max_tokens) {
  nlohmann::json body = {{"model", model},
                         {"stream", true},
                         {"stream_options", {{"include_usage", true}}},
                         {"ignore_eos", true}};
  if (chat) {
    body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt}}});
    body["max_completion_tokens"] = max_tokens;
  } else {
    body["prompt"] = prompt;
    body["max_tokens"] = max_tokens;
    body["repetition_penalty"] = 1.0;
  }
  return body.dump();
}

std::string first_model(const BaseUrl& base) {
  const HttpReply reply = http_request(base, "GET", "/v1/models", "");
  if (reply.status != 200) fail("GET /v1/models failed: ", reply.error.empty() ? reply.body : reply.error);
  const auto json = nlohmann::json::parse(reply.body, nullptr, false);
  if (json.is_discarded() || !json.contains("data") || json["data"].empty())
    fail("GET /v1/models returned no model");
  return json["data"][0].value("id", "");
}

// What the event callback accumulates for one request.
struct Progress {
  bool got_choice = false;
  Clock::time_point first, last;
  std::vector<double> itl;
  int usage_completion = -1, usage_prompt = -1;
  std::string text, error;
};

void on_event(Progress& p, bool chat, std::string_view data, Clock::time_point at) {
  if (data == "[DONE]") return;
  const auto json = nlohmann::json::parse(data, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    p.error = "unparseable event: " + std::string(data.substr(0, 200));
    return;
  }
  const auto choices = json.find("choices");
  if (choices != json.end() && choices->is_array() && !choices->empty()) {
    if (p.got_choice) p.itl.push_back(std::chrono::duration<double>(at - p.last).count());
    else p.first = at;
    p.got_choice = true;
    p.last = at;
    const auto& c = (*choices)[0];
    const auto& piece = chat ? c.value("delta", nlohmann::json::object()).value("content", nlohmann::json())
                             : c.value("text", nlohmann::json());
    if (piece.is_string()) p.text += piece.get<std::string>();
  } else if (const auto usage = json.find("usage"); usage != json.end() && usage->is_object()) {
    p.usage_completion = usage->value("completion_tokens", -1);
    p.usage_prompt = usage->value("prompt_tokens", -1);
  }
}

RequestRecord to_record(const StreamResult& r, const Progress& p, const Prompt& prompt,
                        const Tokenizer& tok, Clock::time_point start) {
  RequestRecord rec;
  rec.start = std::chrono::duration<double>(r.sent - start).count();
  rec.prompt_len = p.usage_prompt >= 0 ? p.usage_prompt : prompt.num_tokens;
  rec.error = !r.error.empty() ? r.error + (r.body.empty() ? "" : ": " + r.body.substr(0, 300)) : p.error;
  if (rec.error.empty() && !p.got_choice) rec.error = "Never received a valid chunk to calculate TTFT.";
  rec.success = rec.error.empty();
  if (!rec.success) return rec;
  rec.ttft = std::chrono::duration<double>(p.first - r.sent).count();
  rec.latency = std::chrono::duration<double>(p.last - r.sent).count();
  rec.itl = p.itl;
  // vLLM counts tokens with its tokenizer only when the server sent no usage.
  rec.output_tokens = p.usage_completion > 0 ? p.usage_completion
                                             : static_cast<int>(tok.encode(p.text, false, false).size());
  return rec;
}

struct Run {
  std::vector<RequestRecord> records;
  double duration_s = 0;
};

Run run_load(const BaseUrl& base, LoadPlan plan, bool chat, const std::vector<Prompt>& prompts,
             const Tokenizer& tok) {
  std::vector<Progress> progress(plan.bodies.size());
  plan.on_event = [&](size_t i, std::string_view data, Clock::time_point at) { on_event(progress[i], chat, data, at); };
  const auto start = Clock::now();
  const auto results = run_stream_load(base, plan);
  Run run;
  run.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  for (size_t i = 0; i < results.size(); ++i)
    run.records.push_back(to_record(results[i], progress[i], prompts[i % prompts.size()], tok, start));
  return run;
}

std::vector<double> parse_percentiles(const std::string& list) {
  std::vector<double> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    char* end = nullptr;
    const double p = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !(p >= 0 && p <= 100)) fail("--percentiles: bad value '", item, "'");
    out.push_back(p);
  }
  return out;
}

void raise_open_file_limit() {  // one socket per request in flight
  struct rlimit lim {};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &lim);
  }
}

}  // namespace

int bench_serve(int argc, char** argv) {
  const Args args(argc, argv,
                  {"base-url", "endpoint", "dataset", "random-input-len", "random-output-len", "num-prompts",
                   "request-rate", "max-concurrency", "seed", "model", "tokenizer", "percentiles",
                   "output-json"});
  if (!args.positional().empty()) fail("unexpected argument ", args.positional()[0]);
  if (!args.has("base-url")) fail("--base-url is required (e.g. http://127.0.0.1:8000)");
  if (args.get("dataset", "random") != "random") fail("--dataset: only 'random' is supported");
  const BaseUrl base = parse_base_url(args.get("base-url", ""));
  const std::string endpoint = args.get("endpoint", "/v1/completions");
  if (endpoint != "/v1/completions" && endpoint != "/v1/chat/completions")
    fail("--endpoint must be /v1/completions or /v1/chat/completions");
  const bool chat = endpoint == "/v1/chat/completions";
  const int input_len = static_cast<int>(args.get_int("random-input-len", 1024, 1, 1 << 20));
  const int output_len = static_cast<int>(args.get_int("random-output-len", 128, 1, 1 << 20));
  const int num_prompts = static_cast<int>(args.get_int("num-prompts", 1000, 1, 1 << 22));
  const double rate = args.get_double("request-rate", INFINITY, 1e-9, INFINITY);
  const int max_concurrency = static_cast<int>(args.get_int("max-concurrency", 0, 0, 1 << 20));
  const auto percentiles = parse_percentiles(args.get("percentiles", "99"));
  std::mt19937_64 rng(static_cast<uint64_t>(args.get_int("seed", 0, 0, 1LL << 62)));
  raise_open_file_limit();

  const auto tokenizer = open_tokenizer(args.get("tokenizer", default_model_path()));
  const std::string model = args.has("model") ? args.get("model", "") : first_model(base);
  const auto prompts = random_prompts(*tokenizer, num_prompts, input_len, rng);

  LoadPlan plan;
  plan.path = endpoint;
  plan.max_concurrency = max_concurrency;
  for (const auto& p : prompts) plan.bodies.push_back(request_body(chat, model, p.text, output_len));

  // vLLM's initial single-prompt test run: not counted, but it must succeed.
  LoadPlan probe = plan;
  probe.bodies.resize(1);
  const Run test = run_load(base, probe, chat, prompts, *tokenizer);
  if (!test.records[0].success) fail("initial test run failed: ", test.records[0].error);

  plan.send_at_s = poisson_send_times(num_prompts, rate, rng);
  const Run run = run_load(base, plan, chat, prompts, *tokenizer);
  nlohmann::json result = serve_metrics(run.records, run.duration_s, percentiles);
  const nlohmann::json config = {
      {"backend", chat ? "openai-chat" : "openai"}, {"base_url", args.get("base-url", "")},
      {"endpoint", endpoint},  {"model_id", model},
      {"num_prompts", num_prompts}, {"random_input_len", input_len},
      {"random_output_len", output_len}, {"request_rate", std::isinf(rate) ? nlohmann::json("inf") : nlohmann::json(rate)},
      {"max_concurrency", max_concurrency > 0 ? nlohmann::json(max_concurrency) : nlohmann::json()},
      {"seed", args.get_int("seed", 0, 0, 1LL << 62)},
      {"prompt_text", "random token ids decoded to text, re-encoded to random-input-len tokens"},
  };
  for (const auto& [key, value] : config.items()) result[key] = value;

  nlohmann::json summary = result;  // stdout without the per-request lists
  for (const char* key : {"input_lens", "output_lens", "ttfts", "itls", "latencies", "errors"}) summary.erase(key);
  std::puts(summary.dump(2).c_str());
  if (args.has("output-json")) {
    std::ofstream out(args.get("output-json", ""));
    if (!out) fail("cannot write ", args.get("output-json", ""));
    out << result.dump(2) << '\n';
  }
  return run.records.empty() || result["completed"].get<int>() == 0 ? 1 : 0;
}

}  // namespace pagoda::cli
