// The engine for front ends: EngineCore on its own thread, fed through a thread-safe
// command queue; each request's outputs come back through its OutputStream.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/engine_core.h"
#include "engine/engine_stats.h"
#include "engine/model_bundle.h"
#include "engine/output_stream.h"

namespace pagoda {

class LLMEngine {
 public:
  // Loads the model; throws Error on a bad checkpoint or options.
  LLMEngine(const std::string& model_path, const EngineOptions& options);
  ~LLMEngine();
  LLMEngine(const LLMEngine&) = delete;
  LLMEngine& operator=(const LLMEngine&) = delete;

  // Queues a request without waiting for the engine thread: validation errors are thrown
  // here, on the caller's thread (nothing is queued then). An error only the engine
  // thread can see (an id already in use) fails the returned stream instead. With n > 1
  // the stream carries n choices (RequestOutput::index) and ends after the last.
  [[nodiscard]] std::shared_ptr<OutputStream> add_request(const RequestId& id, std::vector<int32_t> prompt_ids,
                                                          SamplingParams params);
  // The request's stream ends with reason Abort (unless it finished first).
  void abort(const RequestId& id);

  [[nodiscard]] const Tokenizer& tokenizer() const { return bundle_.tokenizer(); }
  [[nodiscard]] const ModelSpec& model_spec() const { return bundle_.model().spec(); }
  [[nodiscard]] const SchedulerConfig& config() const { return core_.config(); }
  // A copy of the snapshot taken after the latest step.
  [[nodiscard]] EngineStats stats() const;

 private:
  // Runs on the engine thread; alive is false when the engine stopped before running it.
  using Command = std::function<void(bool alive)>;
  void post(Command command);
  void loop();
  void refresh_stats();

  ModelBundle bundle_;
  EngineCore core_;
  std::unordered_map<RequestId, std::shared_ptr<OutputStream>> streams_;  // engine thread only
  mutable std::mutex stats_mu_;
  EngineStats stats_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> commands_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace pagoda
