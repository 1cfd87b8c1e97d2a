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

  // Queues a request; validation errors are thrown here (nothing is queued then).
  [[nodiscard]] std::shared_ptr<OutputStream> add_request(const RequestId& id, std::vector<int32_t> prompt_ids,
                                                          SamplingParams params);
  // The request's stream ends with reason Abort (unless it finished first).
  void abort(const RequestId& id);

  [[nodiscard]] const Tokenizer& tokenizer() const { return bundle_.tokenizer(); }

 private:
  // Runs on the engine thread; alive is false when the engine stopped before running it.
  using Command = std::function<void(bool alive)>;
  void post(Command command);
  void loop();

  ModelBundle bundle_;
  EngineCore core_;
  std::unordered_map<RequestId, std::shared_ptr<OutputStream>> streams_;  // engine thread only
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> commands_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace pagoda
