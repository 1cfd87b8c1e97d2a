// What the CLI commands share: a backend, the loaded checkpoint, its model and tokenizer.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "io/tokenizer.h"
#include "loader/load_model.h"
#include "model/model.h"

namespace pagoda::cli {

class ModelSession {
 public:
  ModelSession(const std::string& path, int num_threads);

  [[nodiscard]] Backend& backend() { return *backend_; }
  [[nodiscard]] Model& model() { return *model_; }
  [[nodiscard]] const Tokenizer& tokenizer() const { return *tokenizer_; }
  [[nodiscard]] const LoadedModel& loaded() const { return loaded_; }

 private:
  std::unique_ptr<Backend> backend_;
  LoadedModel loaded_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

}  // namespace pagoda::cli
