// pagoda bench latency [MODEL] --input-len 128 --output-len 128 --batch-size 1 --output-json FILE
// Times the prefill of batch-size random prompts and their decode, like
// `vllm bench latency`, and prints (and optionally writes) JSON.
// pagoda bench throughput [MODEL] --input-len L --output-len O --num-prompts N [engine flags]
// Runs N random prompts through the engine (ignore_eos), like `vllm bench throughput`.
#include <sys/resource.h>

#include <chrono>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "cli/args.h"
#include "cli/bench_serve.h"
#include "cli/commands.h"
#include "cli/engine_args.h"
#include "loader/load_model.h"
#include "engine/llm.h"
#include "runner/batch_generator.h"

namespace pagoda::cli {

namespace {

double peak_rss_mb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

int bench_latency(int argc, char** argv) {
  const Args args(argc, argv,
                  {"input-len", "output-len", "batch-size", "output-json", "threads", "num-iters",
                   "seed", "device"});
  if (args.positional().size() > 1) fail("expected at most one MODEL argument");
  const std::string path = args.positional().empty() ? default_model_path() : args.positional()[0];
  const int input_len = static_cast<int>(args.get_int("input-len", 128, 1, 1 << 20));
  const int output_len = static_cast<int>(args.get_int("output-len", 128, 2, 1 << 20));
  const int batch = static_cast<int>(args.get_int("batch-size", 1, 1, 4096));
  const int iters = static_cast<int>(args.get_int("num-iters", 3, 1, 1000));
  // Random prompts need no tokenizer: only the weights are loaded.
  const std::unique_ptr<Backend> backend =
      make_backend(args.get("device", "auto"), static_cast<int>(args.get_int("threads", 0, 0, 1024)));
  const LoadedModel loaded = load_model(path);
  const std::unique_ptr<Model> model = make_model(loaded, *backend);

  std::mt19937 rng(static_cast<uint32_t>(args.get_int("seed", 0, 0, 1LL << 31)));
  const int vocab = model->spec().vocab_size;
  std::uniform_int_distribution<int32_t> pick(0, vocab - 1);
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(batch));
  for (auto& p : prompts) {
    for (int i = 0; i < input_len; ++i) p.push_back(pick(rng));
  }
  GenerateOptions options;
  options.max_tokens = output_len;
  options.stop_at_eos = false;
  options.prefill_chunk = input_len;
  BatchGenerator generator(*model, *backend);

  generator.generate(prompts, options);  // warm-up
  double prefill = 0, decode = 0;
  for (int i = 0; i < iters; ++i) {
    generator.generate(prompts, options);
    prefill += generator.stats().prefill_seconds;
    decode += generator.stats().decode_seconds;
  }
  prefill /= iters;
  decode /= iters;
  // The first output token of each sequence comes out of the prefill step.
  const double decode_steps = output_len - 1;
  nlohmann::json result = {
      {"model", path},
      {"backend", backend->name()},
      {"input_len", input_len},
      {"output_len", output_len},
      {"batch_size", batch},
      {"num_iters", iters},
      {"prefill_seconds", prefill},
      {"prefill_tokens_per_s", batch * input_len / prefill},
      {"decode_seconds", decode},
      {"decode_tokens_per_s", batch * decode_steps / decode},
      {"decode_ms_per_step", 1000.0 * decode / decode_steps},
      {"peak_rss_mb", peak_rss_mb()},
  };
  const std::string text = result.dump(2);
  std::puts(text.c_str());
  if (args.has("output-json")) {
    std::ofstream out(args.get("output-json", ""));
    if (!out) fail("cannot write ", args.get("output-json", ""));
    out << text << '\n';
  }
  return 0;
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

void write_json(const Args& args, const nlohmann::json& result) {
  const std::string text = result.dump(2);
  std::puts(text.c_str());
  if (args.has("output-json")) {
    std::ofstream out(args.get("output-json", ""));
    if (!out) fail("cannot write ", args.get("output-json", ""));
    out << text << '\n';
  }
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
      {"peak_rss_mb", peak_rss_mb()},
      {"time_breakdown", step_time_breakdown(llm.core())},
  });
  return 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  if (argc < 1) fail("usage: pagoda bench latency|throughput [MODEL] [options] | serve --base-url URL [options]");
  const std::string which = argv[0];
  if (which == "latency") return bench_latency(argc - 1, argv + 1);
  if (which == "throughput") return bench_throughput(argc - 1, argv + 1);
  if (which == "serve") return bench_serve(argc - 1, argv + 1);
  fail("unknown benchmark ", which, " (known: latency, throughput, serve)");
}

}  // namespace pagoda::cli
