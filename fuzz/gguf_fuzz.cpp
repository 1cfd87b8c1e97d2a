// libFuzzer target: GgufFile::parse on arbitrary bytes, then load_gguf_model on what
// parses. Any outcome but success or a pagoda::Error (a crash, a sanitizer report, another
// exception) is a bug. Seeds: fuzz/corpus/gguf_fuzz (tools/make_gguf_fuzz_seeds.py).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/error.h"
#include "loader/gguf.h"
#include "loader/load_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<pagoda::GgufFile> file;
  try {
    file = pagoda::GgufFile::parse(std::span<const uint8_t>(data, size));
  } catch (const pagoda::Error&) {
    return 0;
  }
  try {
    const pagoda::LoadedModel model = pagoda::load_gguf_model(file);
    (void)model;
  } catch (const pagoda::Error&) {
  }
  return 0;
}
