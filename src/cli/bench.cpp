// pagoda bench latency [MODEL] --input-len 128 --output-len 128 --batch-size 1 --output-json FILE
// Times the prefill of batch-size random prompts and their decode through the engine (decode
// graphs included where the backend has them), like `vllm bench latency`; prints (and
// optionally writes) JSON. Takes the engine flags.
// pagoda bench throughput [MODEL] --input-len L --output-len O --num-prompts N [engine flags]
// Runs N random prompts through the engine (ignore_eos), like `vllm bench throughput`.
// pagoda bench tokenize TOKENIZER [--corpus tools/corpus/corpus.jsonl] [--repeat 5] [--output-json FILE]
// Encodes every corpus string on one thread (no BOS/EOS, special-token text as plain text),
// --repeat times after one untimed pass, and reports the fastest pass in MB/s of UTF-8
// input. TOKENIZER: a .gguf file, a Hugging Face directory or a tokenizer.json.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "cli/args.h"
#include "cli/bench_serve.h"
#include "cli/commands.h"
#include "cli/engine_args.h"
#include "cli/open_tokenizer.h"
#include "engine/llm.h"

namespace pagoda::cli {

namespace {

// This program's peak resident set: VmHWM, the high-water mark of its own address space.
// Not getrusage's ru_maxrss, which Linux carries over fork and exec from the parent: a bench
// started from a Python process holding a 16 GB model reported 16 GB.
double peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;  // kB
  }
  struct rusage usage {};  // without /proc
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

void write_json(const Args& args, const nlohmann::json& result) {
  const std::string text = result.dump(2);
  std::puts(text.c_str());
  if (args.has("output-json")) {
    std::ofstream out(args.get("output-json", ""));
    if (!out) fail("cannot write ", args.get("output-json", ""));
    out << text << '\n';
  }
}

// One timed pass of a batch through the engine core. The prefill is the steps until every
// prompt has its first token; the decode is the steps after it.
struct LatencyRun {
  double prefill_s = 0, decode_s = 0;
  int decode_steps = 0;
};

LatencyRun run_batch(EngineCore& core, const std::vector<std::vector<int32_t>>& prompts, const SamplingParams& params,
                     int& next_id) {
  for (const auto& p : prompts) core.add_request("latency-" + std::to_string(next_id++), p, params);
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  LatencyRun run;
  std::set<RequestId> started;
  bool prefilled = false;
  const auto start = Clock::now();
  auto decode_start = start;
  while (core.has_unfinished_requests()) {
    for (const RequestOutput& o : core.step()) {
      if (!o.token_ids.empty()) started.insert(o.id);
    }
    if (prefilled) {
      ++run.decode_steps;
    } else if (started.size() == prompts.size()) {
      prefilled = true;
      decode_start = Clock::now();
      run.prefill_s = seconds(start, decode_start);
    }
  }
  run.decode_s = seconds(decode_start, Clock::now());
  return run;
}

// Where an offline run's wall time went, summed over engine steps (EngineStepTimes,
// RunnerTimes): on a GPU, runner_forward is the time to queue kernels and runner_sample
// includes waiting for them.
nlohmann::json step_time_breakdown(const EngineCore& core) {
  const EngineStepTimes& e = core.step_times();
  const RunnerTimes& r = core.runner().times();
  return {{"num_steps", e.num_steps},         {"schedule_s", e.schedule_s},
          {"execute_s", e.execute_s},         {"update_and_output_s", e.update_s},
          {"runner_prepare_s", r.prepare_s},  {"runner_forward_s", r.forward_s},
          {"runner_sample_s", r.sample_s}};
}


int bench_latency(int argc, char** argv) {
  const Args args(argc, argv,
                  with_engine_value_options({"input-len", "output-len", "batch-size", "output-json", "num-iters",
                                             "seed"}),
                  with_engine_flag_options({}));
  if (args.positional().size() > 1) fail("expected at most one MODEL argument");
  const std::string path = args.positional().empty() ? default_model_path() : args.positional()[0];
  const int input_len = static_cast<int>(args.get_int("input-len", 128, 1, 1 << 20));
  const int output_len = static_cast<int>(args.get_int("output-len", 128, 2, 1 << 20));
  const int batch = static_cast<int>(args.get_int("batch-size", 1, 1, 4096));
  const int iters = static_cast<int>(args.get_int("num-iters", 3, 1, 1000));
  // The whole batch prefills in one step and decodes together, as vllm bench latency.
  EngineOptions options = engine_options_from(args);
  if (options.max_model_len == 0) options.max_model_len = input_len + output_len;
  if (!args.has("max-num-seqs")) options.max_num_seqs = std::max(options.max_num_seqs, batch);
  if (!args.has("max-num-batched-tokens")) {
    options.max_num_batched_tokens = std::max(options.max_num_batched_tokens, batch * input_len);
  }
  LLM llm(path, options);

  // Fresh random prompts for every pass, so no pass reuses another's cached prefix.
  std::mt19937 rng(static_cast<uint32_t>(args.get_int("seed", 0, 0, 1LL << 31)));
  std::uniform_int_distribution<int32_t> pick(0, llm.tokenizer().vocab_size() - 1);
  const auto make_prompts = [&] {
    std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(batch));
    for (auto& p : prompts) {
      for (int i = 0; i < input_len; ++i) p.push_back(pick(rng));
    }
    return prompts;
  };
  SamplingParams params;
  params.temperature = 1.0f;  // vllm bench latency's sampling
  params.ignore_eos = true;
  params.max_tokens = output_len;
  int next_id = 0;
  (void)run_batch(llm.core(), make_prompts(), params, next_id);  // warm-up
  double prefill = 0, decode = 0;
  int decode_steps = 0;
  for (int i = 0; i < iters; ++i) {
    const LatencyRun r = run_batch(llm.core(), make_prompts(), params, next_id);
    prefill += r.prefill_s;
    decode += r.decode_s;
    decode_steps += r.decode_steps;
  }
  const std::vector<int> graphs = llm.core().runner().graph_sizes();
  write_json(args, {
      {"model", path},
      {"backend", llm.backend_name()},
      {"input_len", input_len},
      {"output_len", output_len},
      {"batch_size", batch},
      {"num_iters", iters},
      {"prefill_seconds", prefill / iters},
      {"prefill_tokens_per_s", batch * input_len * iters / prefill},
      {"decode_seconds", decode / iters},
      {"decode_tokens_per_s", batch * decode_steps / decode},
      {"decode_ms_per_step", 1000.0 * decode / std::max(1, decode_steps)},
      {"decode_graphs", !graphs.empty()},
      {"async_scheduling", llm.core().config().async_scheduling},
      {"peak_rss_mb", peak_rss_mb()},
      {"time_breakdown", step_time_breakdown(llm.core())},  // every pass, the warm-up's too
  });
  return 0;
}

int bench_throughput(int argc, char** argv) {
  const Args args(argc, argv,
                  with_engine_value_options({"input-len", "output-len", "num-prompts", "output-json", "seed"}),
                  with_engine_flag_options({}));
  if (args.positional().size() > 1) fail("expected at most one MODEL argument");
  const std::string path = args.positional().empty() ? default_model_path() : args.positional()[0];
  const int input_len = static_cast<int>(args.get_int("input-len", 128, 1, 1 << 20));
  const int output_len = static_cast<int>(args.get_int("output-len", 128, 1, 1 << 20));
  const int num_prompts = static_cast<int>(args.get_int("num-prompts", 100, 1, 1 << 20));
  EngineOptions options = engine_options_from(args);
  if (options.max_model_len == 0) options.max_model_len = input_len + output_len;
  LLM llm(path, options);

  std::mt19937 rng(static_cast<uint32_t>(args.get_int("seed", 0, 0, 1LL << 31)));
  std::uniform_int_distribution<int32_t> pick(0, llm.tokenizer().vocab_size() - 1);
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(num_prompts));
  for (auto& p : prompts) {
    for (int i = 0; i < input_len; ++i) p.push_back(pick(rng));
  }
  SamplingParams params;
  params.temperature = 1.0f;  // vllm bench throughput's default sampling
  params.ignore_eos = true;
  params.max_tokens = output_len;
  const auto start = std::chrono::steady_clock::now();
  const auto outputs = llm.generate(prompts, params);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t out_tokens = 0;
  for (const auto& o : outputs) out_tokens += static_cast<int64_t>(o.token_ids.size());
  const int64_t in_tokens = static_cast<int64_t>(num_prompts) * input_len;
  write_json(args, {
      {"model", path},
      {"backend", llm.backend_name()},
      {"num_requests", num_prompts},
      {"input_len", input_len},
      {"output_len", output_len},
      {"elapsed_time", elapsed},
      {"requests_per_second", num_prompts / elapsed},
      {"tokens_per_second", static_cast<double>(in_tokens + out_tokens) / elapsed},
      {"output_tokens_per_second", static_cast<double>(out_tokens) / elapsed},
      {"total_num_tokens", in_tokens + out_tokens},
      {"num_preemptions", llm.core().scheduler().stats().num_preemptions},
      {"async_scheduling", llm.core().config().async_scheduling},
      {"peak_rss_mb", peak_rss_mb()},
      {"time_breakdown", step_time_breakdown(llm.core())},
  });
  return 0;
}

// The texts of a JSONL corpus: each line a JSON object with "text" or a JSON string; split
// on '\n' only (the texts may hold other line breaks).
std::vector<std::string> read_corpus(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open corpus ", path);
  std::vector<std::string> texts;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_string()) {
      texts.push_back(j.get<std::string>());
    } else if (j.is_object() && j.contains("text") && j.at("text").is_string()) {
      texts.push_back(j.at("text").get<std::string>());
    } else {
      fail(path, ":", number, ": neither a JSON string nor an object with a \"text\" string");
    }
  }
  if (texts.empty()) fail("corpus ", path, " has no strings");
  return texts;
}

int bench_tokenize(int argc, char** argv) {
  const Args args(argc, argv, {"corpus", "repeat", "output-json"});
  if (args.positional().size() != 1) {
    fail("usage: pagoda bench tokenize TOKENIZER [--corpus FILE] [--repeat N] [--output-json FILE]");
  }
  const std::string path = args.positional()[0];
  const std::string corpus = args.get("corpus", "tools/corpus/corpus.jsonl");
  const int repeat = static_cast<int>(args.get_int("repeat", 5, 1, 1000));
  const auto tokenizer = open_tokenizer(path);
  const std::vector<std::string> texts = read_corpus(corpus);
  size_t bytes = 0;
  for (const std::string& t : texts) bytes += t.size();

  using Clock = std::chrono::steady_clock;
  // One pass: every string encoded on its own, as a server tokenizes requests.
  const auto pass = [&](int64_t& tokens) {
    tokens = 0;
    const auto start = Clock::now();
    for (const std::string& t : texts) {
      tokens += static_cast<int64_t>(tokenizer->encode(t, /*add_special=*/false, /*parse_special=*/false).size());
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  int64_t tokens = 0;
  (void)pass(tokens);  // warm-up: page faults, caches
  std::vector<double> seconds;
  double best = 0;
  for (int i = 0; i < repeat; ++i) {
    int64_t n = 0;
    seconds.push_back(pass(n));
    if (n != tokens) fail("tokenizer: passes over the same corpus gave ", tokens, " and ", n, " tokens");
    best = i == 0 ? seconds.back() : std::min(best, seconds.back());
  }
  write_json(args, {
      {"tokenizer", path},
      {"corpus", corpus},
      {"strings", texts.size()},
      {"bytes", bytes},
      {"tokens", tokens},
      {"threads", 1},
      {"repeat", repeat},
      {"seconds", best},
      {"seconds_per_pass", seconds},
      {"mb_per_s", static_cast<double>(bytes) / best / 1e6},
      {"timing", "best of the timed passes (after one untimed pass); MB = 10^6 bytes of UTF-8 input"},
  });
  return 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  if (argc < 1) {
    fail("usage: pagoda bench latency|throughput [MODEL] [options] | serve --base-url URL [options] | "
         "tokenize TOKENIZER [options]");
  }
  const std::string which = argv[0];
  if (which == "latency") return bench_latency(argc - 1, argv + 1);
  if (which == "throughput") return bench_throughput(argc - 1, argv + 1);
  if (which == "serve") return bench_serve(argc - 1, argv + 1);
  if (which == "tokenize") return bench_tokenize(argc - 1, argv + 1);
  fail("unknown benchmark ", which, " (known: latency, throughput, serve, tokenize)");
}

}  // namespace pagoda::cli
