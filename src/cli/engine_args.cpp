#include "cli/engine_args.h"

#include <cctype>

#include "core/error.h"

namespace pagoda::cli {

namespace {

// Bytes, optionally with a binary suffix: 4294967296, 4G, 4GiB, 512M, 512MiB.
int64_t parse_bytes(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i > 15) fail("--kv-cache-memory: expected a byte count, got '", s, "'");
  int64_t v = std::stoll(s.substr(0, i));
  std::string suffix = s.substr(i);
  if (suffix.size() > 1 && (suffix.substr(1) == "iB" || suffix.substr(1) == "B")) suffix.resize(1);
  if (suffix == "K" || suffix == "k") return v << 10;
  if (suffix == "M" || suffix == "m") return v << 20;
  if (suffix == "G" || suffix == "g") return v << 30;
  if (suffix.empty()) return v;
  fail("--kv-cache-memory: unknown suffix in '", s, "' (K, M or G)");
}

}  // namespace

std::set<std::string> with_engine_value_options(std::set<std::string> options) {
  options.insert({"max-num-seqs", "max-num-batched-tokens", "max-model-len", "block-size",
                  "kv-cache-memory", "scheduling-policy", "long-prefill-token-threshold", "threads",
                  "device", "gpu-memory-utilization"});
  return options;
}

std::set<std::string> with_engine_flag_options(std::set<std::string> flags) {
  flags.insert({"enable-prefix-caching", "no-enable-prefix-caching", "enforce-eager", "async-scheduling",
                "no-async-scheduling"});
  return flags;
}

EngineOptions engine_options_from(const Args& args) {
  EngineOptions o;
  o.max_num_seqs = static_cast<int>(args.get_int("max-num-seqs", o.max_num_seqs, 1, 1 << 20));
  o.max_num_batched_tokens =
      static_cast<int>(args.get_int("max-num-batched-tokens", o.max_num_batched_tokens, 1, 1 << 24));
  o.max_model_len = static_cast<int>(args.get_int("max-model-len", 0, 0, 1 << 24));
  o.block_size = static_cast<int>(args.get_int("block-size", o.block_size, 1, 1024));
  if (args.has("kv-cache-memory")) o.kv_cache_memory = parse_bytes(args.get("kv-cache-memory", ""));
  if (args.has("enable-prefix-caching") && args.has("no-enable-prefix-caching")) {
    fail("--enable-prefix-caching and --no-enable-prefix-caching contradict each other");
  }
  if (args.has("no-enable-prefix-caching")) o.enable_prefix_caching = false;
  o.enforce_eager = args.has("enforce-eager");
  if (args.has("async-scheduling") && args.has("no-async-scheduling")) {
    fail("--async-scheduling and --no-async-scheduling contradict each other");
  }
  if (args.has("async-scheduling")) o.async_scheduling = true;
  if (args.has("no-async-scheduling")) o.async_scheduling = false;
  const std::string policy = args.get("scheduling-policy", "fcfs");
  if (policy == "fcfs") {
    o.scheduling_policy = SchedulingPolicy::Fcfs;
  } else if (policy == "priority") {
    o.scheduling_policy = SchedulingPolicy::Priority;
  } else {
    fail("--scheduling-policy: expected fcfs or priority, got '", policy, "'");
  }
  o.long_prefill_token_threshold =
      static_cast<int>(args.get_int("long-prefill-token-threshold", 0, 0, 1 << 24));
  o.num_threads = static_cast<int>(args.get_int("threads", 0, 0, 1024));
  o.device = args.get("device", o.device);
  o.gpu_memory_utilization = args.get_double("gpu-memory-utilization", o.gpu_memory_utilization, 0.01, 1.0);
  return o;
}

}  // namespace pagoda::cli
