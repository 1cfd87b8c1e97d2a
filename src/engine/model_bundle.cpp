#include "engine/model_bundle.h"

#include "io/hf_tokenizer.h"
#include "loader/gguf.h"

namespace pagoda {

ModelBundle::ModelBundle(const std::string& path, int num_threads, const std::string& device)
    : ModelBundle(path, make_backend(device, num_threads)) {}

ModelBundle::ModelBundle(const std::string& path, std::unique_ptr<Backend> backend)
    : backend_(std::move(backend)), loaded_(load_model(path)) {
  if (loaded_.gguf != nullptr) {
    tokenizer_ = load_gguf_tokenizer(*loaded_.gguf);
  } else if (!loaded_.hf_dir.empty()) {
    tokenizer_ = load_hf_tokenizer(loaded_.hf_dir);  // an Error names a missing tokenizer.json
  } else {
    fail("model ", path, " has no tokenizer");
  }
  model_ = make_model(loaded_, *backend_);
}

}  // namespace pagoda
