// A model as a forward pass over backend ops. The runner hands it a flattened batch (any
// mix of prefill chunks and decodes) and the paged KV cache; it returns logits for the
// tokens asked. Architectures live one per file (llama.cpp, gemma3.cpp).
#pragma once

#include <memory>
#include <span>

#include "backend/backend.h"
#include "loader/load_model.h"
#include "model/kv_cache.h"

namespace pagoda {

struct ForwardBatch {
  std::span<const int32_t> token_ids;  // [num_tokens]
  std::span<const int32_t> positions;  // [num_tokens]
  AttentionMetadata attention;         // where each token's K/V goes and what it attends to
  std::span<const int32_t> logit_rows; // indices into token_ids whose logits are wanted
};

class Model {
 public:
  virtual ~Model() = default;
  [[nodiscard]] virtual const ModelSpec& spec() const = 0;
  // Runs the batch; returns logits [logit_rows.size(), vocab_size] (F32, backend memory).
  [[nodiscard]] virtual Tensor forward(const ForwardBatch& batch, KvCache& cache) = 0;
};

// The model for the loaded checkpoint's architecture, with its weights uploaded to backend.
// The LoadedModel must outlive the model (weights may be views into its mmap).
[[nodiscard]] std::unique_ptr<Model> make_model(const LoadedModel& loaded, Backend& backend);

}  // namespace pagoda
