#include "engine/model_bundle.h"

#include "loader/gguf.h"

namespace pagoda {

ModelBundle::ModelBundle(const std::string& path, int num_threads)
    : backend_(make_cpu_backend(num_threads)), loaded_(load_model(path)) {
  if (loaded_.gguf == nullptr) fail("tokenizers for Hugging Face directories are not supported yet");
  tokenizer_ = load_gguf_tokenizer(*loaded_.gguf);
  model_ = make_model(loaded_, *backend_);
}

}  // namespace pagoda
