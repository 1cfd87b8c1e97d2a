// A loaded model ready for the engine: its backend, the checkpoint, its forward pass
// and its tokenizer, in the order they must be built and destroyed.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "io/tokenizer.h"
#include "loader/load_model.h"
#include "model/model.h"

namespace pagoda {

class ModelBundle {
 public:
  // Throws Error when the checkpoint cannot be loaded or has no usable tokenizer. device is
  // a --device value (cpu, cuda, auto); num_threads is for the CPU backend.
  ModelBundle(const std::string& path, int num_threads, const std::string& device = "cpu");
  // The same on a backend of the caller's (tests wrap the CPU backend).
  ModelBundle(const std::string& path, std::unique_ptr<Backend> backend);

  [[nodiscard]] Backend& backend() { return *backend_; }
  [[nodiscard]] const Backend& backend() const { return *backend_; }
  [[nodiscard]] Model& model() { return *model_; }
  [[nodiscard]] const Model& model() const { return *model_; }
  [[nodiscard]] const Tokenizer& tokenizer() const { return *tokenizer_; }
  [[nodiscard]] const LoadedModel& loaded() const { return loaded_; }

 private:
  std::unique_ptr<Backend> backend_;
  LoadedModel loaded_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

}  // namespace pagoda
