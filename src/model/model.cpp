#include "model/model.h"

#include "model/decoder.h"

namespace pagoda {

std::unique_ptr<Model> make_model(const LoadedModel& loaded, Backend& backend) {
  switch (loaded.spec.arch) {
    case Arch::Llama:
    case Arch::Mistral:
    case Arch::Qwen2:
    case Arch::Qwen3:
      return make_llama(loaded, backend);
    case Arch::Gemma3:
      return make_gemma3(loaded, backend);
  }
  fail("unsupported architecture");
}

}  // namespace pagoda
