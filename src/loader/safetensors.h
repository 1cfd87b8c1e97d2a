// safetensors files (8-byte header length, JSON header, raw data), memory-mapped, and the
// sharded form (model.safetensors.index.json). The header is checked entry by entry before
// any tensor is used: a hostile file is refused with an Error naming the tensor and problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/dtype.h"
#include "core/mapped_file.h"
#include "core/tensor.h"

namespace pagoda {

// Headers larger than this are refused before they are parsed (the reference
// implementation uses the same bound).
inline constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

struct SafetensorsTensorInfo {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  size_t offset = 0;  // from the start of the file's bytes
  size_t nbytes = 0;
};

class SafetensorsFile {
 public:
  // Maps and parses a file. Throws Error naming the path and the problem.
  static std::unique_ptr<SafetensorsFile> open(const std::string& path);
  // Parses bytes the caller keeps alive (tests, fuzzing). Throws Error.
  static std::unique_ptr<SafetensorsFile> parse(std::span<const uint8_t> bytes);

  // Sorted by name.
  [[nodiscard]] const std::vector<SafetensorsTensorInfo>& tensors() const { return tensors_; }
  [[nodiscard]] const SafetensorsTensorInfo* find(std::string_view name) const;
  // A view of the tensor's bytes (valid while this object lives).
  [[nodiscard]] Tensor tensor(const SafetensorsTensorInfo& info) const;
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The file's map; null when parsed from caller-owned bytes.
  [[nodiscard]] const MappedFile* mapping() const { return file_.get(); }

 private:
  SafetensorsFile() = default;
  void parse_header();

  std::unique_ptr<MappedFile> file_;
  std::span<const uint8_t> bytes_;
  std::vector<SafetensorsTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

// Parses the text of model.safetensors.index.json into tensor name -> shard file name.
// Shard names must be plain file names (no '/', no "..", not empty). Throws Error.
[[nodiscard]] std::map<std::string, std::string> parse_safetensors_index(std::string_view text);

// The safetensors of one Hugging Face model directory: model.safetensors, or the shards
// named by model.safetensors.index.json.
class SafetensorsSet {
 public:
  // Throws Error naming the directory or file and the problem.
  static std::unique_ptr<SafetensorsSet> open_dir(const std::string& dir);

  // Every tensor name, sorted.
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] const SafetensorsTensorInfo* find(std::string_view name) const;
  // Throws Error when the set has no such tensor.
  [[nodiscard]] Tensor tensor(std::string_view name) const;
  [[nodiscard]] size_t num_files() const { return files_.size(); }
  // The maps of its files.
  [[nodiscard]] std::vector<const MappedFile*> mappings() const;

 private:
  struct Entry {
    const SafetensorsFile* file;
    const SafetensorsTensorInfo* info;
  };
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace pagoda
