// pagoda inspect FILE.gguf [--full]: the file's header, metadata and tensor infos as JSON
// (tensor offsets are absolute file offsets; shapes are outermost first).
// Arrays longer than kSummaryLength are summarized as {"type", "length"} unless --full.
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "loader/gguf.h"

namespace pagoda::cli {

namespace {

constexpr size_t kSummaryLength = 64;

nlohmann::ordered_json to_json(const GgufValue& v, bool full) {
  if (const auto* i = std::get_if<int64_t>(&v.value)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&v.value)) return *u;
  if (const auto* d = std::get_if<double>(&v.value)) return *d;
  if (const auto* b = std::get_if<bool>(&v.value)) return *b;
  if (const auto* s = std::get_if<std::string>(&v.value)) return *s;
  const GgufArray& array = *std::get<std::shared_ptr<GgufArray>>(v.value);
  if (!full && array.values.size() > kSummaryLength) {
    return {{"type", gguf_type_name(array.element_type)}, {"length", array.values.size()}};
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const GgufValue& element : array.values) out.push_back(to_json(element, full));
  return out;
}

int usage() {
  std::fputs("usage: pagoda inspect FILE.gguf [--full]\n", stderr);
  return 2;
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  std::string path;
  bool full = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--full") {
      full = true;
    } else if (arg == "--help" || arg == "-h") {
      std::puts("usage: pagoda inspect FILE.gguf [--full]");
      return 0;
    } else if (path.empty() && !arg.starts_with("-")) {
      path = arg;
    } else {
      return usage();
    }
  }
  if (path.empty()) return usage();

  const auto file = GgufFile::open(path);
  nlohmann::ordered_json out;
  out["version"] = file->version();
  out["alignment"] = file->alignment();
  out["data_offset"] = file->data_offset();
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
  for (const auto& [key, value] : file->metadata()) metadata[key] = to_json(value, full);
  out["metadata"] = std::move(metadata);
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const GgufTensorInfo& t : file->tensors()) {
    tensors.push_back({{"name", t.name},
                       {"type", std::string(dtype_name(t.dtype))},
                       {"shape", t.shape},
                       {"offset", t.offset}});
  }
  out["tensors"] = std::move(tensors);
  // Strings in a GGUF file need not be valid UTF-8; replace bad bytes rather than fail.
  std::cout << out.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  return 0;
}

}  // namespace pagoda::cli
