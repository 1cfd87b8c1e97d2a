#include "engine/llm_engine.h"

#include <future>

#include "core/error.h"

namespace pagoda {

LLMEngine::LLMEngine(const std::string& model_path, const EngineOptions& options)
    : bundle_(model_path, options.num_threads),
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
  auto stream = std::make_shared<OutputStream>();
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> result = done->get_future();
  post([this, id, stream, done, prompt = std::move(prompt_ids), p = std::move(params)](bool alive) mutable {
    try {
      if (!alive) fail("the engine has stopped");
      core_.add_request(id, std::move(prompt), std::move(p));
      streams_[id] = stream;
      done->set_value();
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  });
  result.get();  // rethrows the validation error
  return stream;
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
    if (!core_.has_unfinished_requests()) continue;
    try {
      for (RequestOutput& out : core_.step()) {
        const auto it = streams_.find(out.id);
        if (it == streams_.end()) continue;
        const bool finished = out.finished;
        it->second->push(std::move(out));
        if (finished) streams_.erase(it);
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
