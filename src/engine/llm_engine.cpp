#include "engine/llm_engine.h"

#include "core/error.h"

namespace pagoda {

LLMEngine::LLMEngine(const std::string& model_path, const EngineOptions& options)
    : bundle_(model_path, options.num_threads, options.device),
      core_(bundle_.model(), bundle_.backend(), bundle_.tokenizer(), options),
      thread_([this] { loop(); }) {}

LLMEngine::~LLMEngine() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void LLMEngine::post(Command command) {
  {
    std::lock_guard lock(mu_);
    if (!stop_) {
      commands_.push_back(std::move(command));
      command = nullptr;
    }
  }
  if (command) command(false);
  cv_.notify_all();
}

std::shared_ptr<OutputStream> LLMEngine::add_request(const RequestId& id, std::vector<int32_t> prompt_ids,
                                                     SamplingParams params) {
  params = core_.prepare(id, prompt_ids, std::move(params));  // throws here, on the caller's thread
  auto stream = std::make_shared<OutputStream>(params.n);
  post([this, id, stream, prompt = std::move(prompt_ids), p = std::move(params)](bool alive) mutable {
    if (!alive) return stream->fail_with("the engine has stopped");
    try {
      const auto num_prompt = static_cast<int64_t>(prompt.size());
      core_.add_prepared_request(id, std::move(prompt), std::move(p));
      streams_[id] = stream;
      std::lock_guard lock(stats_mu_);
      stats_.num_prompt_tokens += num_prompt;
    } catch (const std::exception& e) {
      stream->fail_with(e.what());
    }
  });
  return stream;
}

EngineStats LLMEngine::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

void LLMEngine::refresh_stats() {
  const SchedulerStats scheduler = core_.scheduler().stats();
  std::lock_guard lock(stats_mu_);
  stats_.scheduler = scheduler;
  stats_.num_kv_blocks = core_.config().num_kv_blocks;
}

void LLMEngine::abort(const RequestId& id) {
  post([this, id](bool alive) {
    if (alive) core_.abort(id);
  });
}

void LLMEngine::loop() {
  for (;;) {
    std::deque<Command> commands;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !commands_.empty() || core_.has_unfinished_requests(); });
      if (stop_) break;
      commands.swap(commands_);
    }
    for (Command& c : commands) c(true);
    if (!core_.has_unfinished_requests()) {
      refresh_stats();  // aborts and admissions show at once
      continue;
    }
    try {
      std::vector<RequestOutput> outputs = core_.step();
      int64_t num_sampled = 0;
      for (const RequestOutput& out : outputs) num_sampled += static_cast<int64_t>(out.token_ids.size());
      {
        std::lock_guard lock(stats_mu_);
        stats_.num_generation_tokens += num_sampled;
        ++stats_.num_steps;
      }
      refresh_stats();
      for (RequestOutput& out : outputs) {
        const auto it = streams_.find(out.id);
        if (it == streams_.end()) continue;
        it->second->push(std::move(out));
        if (it->second->closed()) streams_.erase(it);  // every choice finished
      }
    } catch (const std::exception& e) {
      // The core's state is no longer trustworthy: every reader learns why.
      for (auto& [id, stream] : streams_) stream->fail_with(std::string("engine failed: ") + e.what());
      streams_.clear();
      std::lock_guard lock(mu_);
      stop_ = true;
      break;
    }
  }
  for (auto& [id, stream] : streams_) stream->fail_with("engine stopped");
  streams_.clear();
  std::deque<Command> left;
  {
    std::lock_guard lock(mu_);
    left.swap(commands_);
  }
  for (Command& c : left) c(false);
}

}  // namespace pagoda
