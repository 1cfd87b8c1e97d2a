#include "loader/safetensors.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.h"

namespace pagoda {

namespace {

using nlohmann::json;

// nlohmann keeps the last of duplicate keys silently; a header with two entries of one
// name is ambiguous, so the callback refuses it while parsing.
json parse_json_unique(std::string_view text, const std::string& what) {
  std::vector<std::set<std::string>> keys;
  auto callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: keys.emplace_back(); break;
      case json::parse_event_t::object_end: keys.pop_back(); break;
      case json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
          fail(what, ": duplicate key \"", parsed.get<std::string>(), "\"");
        }
        break;
      default: break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception& e) {
    fail(what, ": invalid JSON: ", e.what());
  }
}

struct DTypeName {
  std::string_view name;
  int bytes;
};

// Every dtype the format defines, so that a refusal can say "unsupported" rather than
// "unknown" for the ones pagoda cannot use.
constexpr DTypeName kKnownDTypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},
    {"U16", 2},  {"I32", 4}, {"U32", 4}, {"I64", 8},     {"U64", 8},     {"F64", 8},
};

DType parse_dtype(const std::string& name, const std::string& tensor) {
  if (name == "F32") return DType::F32;
  if (name == "F16") return DType::F16;
  if (name == "BF16") return DType::BF16;
  for (const DTypeName& known : kKnownDTypes) {
    if (known.name == name) {
      fail("safetensors: tensor ", tensor, " has dtype ", name,
           ", which pagoda does not support (F32, F16 and BF16 only)");
    }
  }
  fail("safetensors: tensor ", tensor, " has unknown dtype \"", name, "\"");
}

uint64_t get_u64(const json& value, const std::string& tensor, const char* field) {
  if (!value.is_number_unsigned()) {
    fail("safetensors: tensor ", tensor, ": ", field, " must hold non-negative integers, got ",
         value.dump());
  }
  return value.get<uint64_t>();
}

}  // namespace

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->file_ = std::make_unique<MappedFile>(path);
  file->bytes_ = file->file_->bytes();
  try {
    file->parse_header();
  } catch (const Error& e) {
    fail(path, ": ", e.what());
  }
  return file;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::parse(std::span<const uint8_t> bytes) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->bytes_ = bytes;
  file->parse_header();
  return file;
}

void SafetensorsFile::parse_header() {
  if (bytes_.size() < 8) fail("safetensors: file of ", bytes_.size(), " bytes has no header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | bytes_[static_cast<size_t>(i)];
  if (header_len > kSafetensorsMaxHeader) {
    fail("safetensors: header length ", header_len, " exceeds the limit of ", kSafetensorsMaxHeader);
  }
  if (header_len > bytes_.size() - 8) {
    fail("safetensors: header length ", header_len, " runs past the end of the file (",
         bytes_.size(), " bytes)");
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes_.data() + 8),
                              static_cast<size_t>(header_len));
  const json header = parse_json_unique(text, "safetensors header");
  if (!header.is_object()) fail("safetensors: header is not a JSON object");

  const size_t data_start = 8 + static_cast<size_t>(header_len);
  const uint64_t data_size = bytes_.size() - data_start;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail("safetensors: __metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) fail("safetensors: __metadata__ value of ", key, " is not a string");
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object()) fail("safetensors: entry of tensor ", name, " is not an object");
    const auto dtype_it = entry.find("dtype");
    const auto shape_it = entry.find("shape");
    const auto offsets_it = entry.find("data_offsets");
    if (dtype_it == entry.end() || !dtype_it->is_string()) {
      fail("safetensors: tensor ", name, " has no dtype string");
    }
    if (shape_it == entry.end() || !shape_it->is_array()) {
      fail("safetensors: tensor ", name, " has no shape array");
    }
    if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2) {
      fail("safetensors: tensor ", name, " has no data_offsets [begin, end]");
    }

    SafetensorsTensorInfo info;
    info.name = name;
    info.dtype = parse_dtype(dtype_it->get<std::string>(), name);
    uint64_t numel = 1;
    for (const json& dim : *shape_it) {
      const uint64_t d = get_u64(dim, name, "shape");
      if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(numel, d, &numel) ||
          numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail("safetensors: tensor ", name, ": shape ", shape_it->dump(), " overflows");
      }
      info.shape.push_back(static_cast<int64_t>(d));
    }
    const auto nbytes = dtype_bytes(info.dtype, numel);
    if (!nbytes) fail("safetensors: tensor ", name, ": shape ", shape_it->dump(), " overflows");
    const uint64_t begin = get_u64((*offsets_it)[0], name, "data_offsets");
    const uint64_t end = get_u64((*offsets_it)[1], name, "data_offsets");
    if (begin > end) fail("safetensors: tensor ", name, ": data_offsets [", begin, ", ", end, "] inverted");
    if (end > data_size) {
      fail("safetensors: tensor ", name, ": data_offsets end ", end, " past the data section (",
           data_size, " bytes)");
    }
    if (end - begin != *nbytes) {
      fail("safetensors: tensor ", name, ": data_offsets span ", end - begin, " bytes but ",
           dtype_name(info.dtype), " ", shape_string(info.shape), " needs ", *nbytes);
    }
    info.offset = data_start + static_cast<size_t>(begin);
    info.nbytes = *nbytes;
    index_.emplace(name, tensors_.size());
    tensors_.push_back(std::move(info));
  }
}

const SafetensorsTensorInfo* SafetensorsFile::find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Tensor SafetensorsFile::tensor(const SafetensorsTensorInfo& info) const {
  return Tensor::view(info.dtype, info.shape, bytes_.data() + info.offset);
}

std::map<std::string, std::string> parse_safetensors_index(std::string_view text) {
  const json index = parse_json_unique(text, "model.safetensors.index.json");
  if (!index.is_object()) fail("model.safetensors.index.json: not a JSON object");
  const auto map_it = index.find("weight_map");
  if (map_it == index.end() || !map_it->is_object()) {
    fail("model.safetensors.index.json: no \"weight_map\" object");
  }
  std::map<std::string, std::string> result;
  for (const auto& [name, shard] : map_it->items()) {
    if (!shard.is_string()) fail("model.safetensors.index.json: shard of tensor ", name, " is not a string");
    const std::string file = shard.get<std::string>();
    // The index must not be able to point outside the model's directory.
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos ||
        file.find('\\') != std::string::npos || file.find('\0') != std::string::npos) {
      fail("model.safetensors.index.json: tensor ", name, " names shard \"", file,
           "\", which is not a plain file name in the model directory");
    }
    result.emplace(name, file);
  }
  return result;
}

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read ", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::unique_ptr<SafetensorsSet> SafetensorsSet::open_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  auto set = std::make_unique<SafetensorsSet>();
  const fs::path index_path = fs::path(dir) / "model.safetensors.index.json";
  const fs::path single_path = fs::path(dir) / "model.safetensors";
  std::error_code ec;
  if (fs::exists(index_path, ec)) {
    std::map<std::string, std::string> weight_map;
    try {
      weight_map = parse_safetensors_index(read_text(index_path));
    } catch (const Error& e) {
      fail(dir, ": ", e.what());
    }
    std::map<std::string, const SafetensorsFile*> shards;
    for (const auto& [name, shard] : weight_map) {
      auto it = shards.find(shard);
      if (it == shards.end()) {
        set->files_.push_back(SafetensorsFile::open((fs::path(dir) / shard).string()));
        it = shards.emplace(shard, set->files_.back().get()).first;
      }
      const SafetensorsTensorInfo* info = it->second->find(name);
      if (info == nullptr) fail(dir, ": index puts tensor ", name, " in ", shard, ", which lacks it");
      set->entries_.emplace(name, Entry{it->second, info});
    }
  } else if (fs::exists(single_path, ec)) {
    set->files_.push_back(SafetensorsFile::open(single_path.string()));
    for (const SafetensorsTensorInfo& info : set->files_.back()->tensors()) {
      set->entries_.emplace(info.name, Entry{set->files_.back().get(), &info});
    }
  } else {
    fail(dir, ": no model.safetensors or model.safetensors.index.json");
  }
  return set;
}

std::vector<const MappedFile*> SafetensorsSet::mappings() const {
  std::vector<const MappedFile*> maps;
  for (const auto& f : files_) {
    if (f->mapping() != nullptr) maps.push_back(f->mapping());
  }
  return maps;
}

std::vector<std::string> SafetensorsSet::names() const {
  std::vector<std::string> result;
  result.reserve(entries_.size());
  for (const auto& entry : entries_) result.push_back(entry.first);
  return result;
}

const SafetensorsTensorInfo* SafetensorsSet::find(std::string_view name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.info;
}

Tensor SafetensorsSet::tensor(std::string_view name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) fail("safetensors: no tensor ", name);
  return it->second.file->tensor(*it->second.info);
}

}  // namespace pagoda
