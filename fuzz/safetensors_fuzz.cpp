// libFuzzer target: safetensors headers and index files from arbitrary bytes. Any input
// must parse or throw pagoda::Error; tensors that parse must lie inside the input.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/error.h"
#include "loader/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pagoda;
  // First byte picks the parser; the rest is the file.
  if (size == 0) return 0;
  const std::span<const uint8_t> bytes(data + 1, size - 1);
  try {
    if (data[0] & 1) {
      (void)parse_safetensors_index(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      return 0;
    }
    const auto file = SafetensorsFile::parse(bytes);
    for (const SafetensorsTensorInfo& info : file->tensors()) {
      PAGODA_CHECK(info.offset <= bytes.size() && info.nbytes <= bytes.size() - info.offset);
      const Tensor t = file->tensor(info);
      PAGODA_CHECK(t.nbytes() == info.nbytes);
      // Touch the data so that ASan sees any out-of-bounds view.
      volatile uint8_t sink = 0;
      for (size_t i = 0; i < info.nbytes; i += 97) sink = sink + static_cast<const uint8_t*>(t.raw())[i];
      if (info.nbytes > 0) sink = sink + static_cast<const uint8_t*>(t.raw())[info.nbytes - 1];
      (void)file->find(info.name);
    }
  } catch (const Error&) {
  }
  return 0;
}
