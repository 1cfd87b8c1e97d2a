// libFuzzer target: config.json text -> ModelSpec. Any input must give a spec or throw
// pagoda::Error (bad JSON included), never crash.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "loader/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json config = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return 0;
  try {
    const pagoda::ModelSpec spec = pagoda::parse_hf_config(config, &config);
    PAGODA_CHECK(spec.layer_sliding.size() == static_cast<size_t>(spec.num_layers));
    PAGODA_CHECK(spec.num_heads % spec.num_kv_heads == 0 && spec.head_dim > 0);
  } catch (const pagoda::Error&) {
  }
  return 0;
}
