// GGUF v2/v3 files: metadata key/values, tensor infos and tensor data, memory-mapped.
// Every count, length, offset and extent read from the file is checked against the
// file's size before it is used, so a hostile file is refused with an Error that names
// the problem and never makes us allocate what the file claims.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/dtype.h"
#include "core/mapped_file.h"
#include "core/tensor.h"

namespace pagoda {

// GGUF metadata value types (gguf_type), with the numbers the format uses.
enum class GgufType : uint32_t {
  Uint8 = 0,
  Int8 = 1,
  Uint16 = 2,
  Int16 = 3,
  Uint32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  Uint64 = 10,
  Int64 = 11,
  Float64 = 12,
};

[[nodiscard]] const char* gguf_type_name(GgufType type);

// Limits on what a file may claim. Arrays nest at most this deep (tokenizer data needs
// one level; anything deeper is hostile).
inline constexpr int kGgufMaxArrayDepth = 8;
inline constexpr int kGgufMaxDims = 4;
// Elements of one array. Each parsed element takes ~50 bytes of memory for as little as
// one in the file; the largest real arrays (vocabularies, merges) hold well under 2^20.
inline constexpr uint64_t kGgufMaxArrayLength = uint64_t{1} << 24;
// general.alignment must be a power of two no larger than this.
inline constexpr uint64_t kGgufMaxAlignment = uint64_t{1} << 20;

struct GgufArray;

// A scalar is held widened: every integer type as int64_t/uint64_t, floats as double.
struct GgufValue {
  GgufType type = GgufType::Uint8;
  std::variant<int64_t, uint64_t, double, bool, std::string, std::shared_ptr<GgufArray>> value;
};

struct GgufArray {
  GgufType element_type = GgufType::Uint8;
  std::vector<GgufValue> values;
};

struct GgufTensorInfo {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;          // row-major, outermost first (GGUF's ne[] reversed)
  uint64_t offset = 0;  // absolute offset of the data in the file
  size_t nbytes = 0;
};

class GgufFile {
 public:
  // Maps and parses a file. Throws Error naming the path and the problem.
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Parses bytes the caller keeps alive (tests, fuzzing). Throws Error.
  static std::unique_ptr<GgufFile> parse(std::span<const uint8_t> bytes);

  [[nodiscard]] uint32_t version() const { return version_; }
  [[nodiscard]] uint64_t alignment() const { return alignment_; }
  // Absolute offset of the tensor data section (the aligned end of the tensor infos).
  [[nodiscard]] uint64_t data_offset() const { return data_offset_; }

  [[nodiscard]] const std::vector<std::pair<std::string, GgufValue>>& metadata() const {
    return metadata_;
  }
  [[nodiscard]] const GgufValue* find(std::string_view key) const;
  [[nodiscard]] bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed getters. Each throws Error naming the key when it is missing or of a type that
  // cannot be converted without loss (any integer type converts to int64 if in range).
  [[nodiscard]] std::string get_string(std::string_view key) const;
  [[nodiscard]] int64_t get_int(std::string_view key) const;
  [[nodiscard]] double get_float(std::string_view key) const;  // integer or float types
  [[nodiscard]] bool get_bool(std::string_view key) const;
  [[nodiscard]] std::vector<std::string> get_string_array(std::string_view key) const;
  [[nodiscard]] std::vector<int64_t> get_int_array(std::string_view key) const;
  [[nodiscard]] std::vector<double> get_float_array(std::string_view key) const;
  // The same, with a default when the key is absent (a wrong type still throws).
  [[nodiscard]] std::string get_string_or(std::string_view key, std::string fallback) const;
  [[nodiscard]] int64_t get_int_or(std::string_view key, int64_t fallback) const;
  [[nodiscard]] double get_float_or(std::string_view key, double fallback) const;
  [[nodiscard]] bool get_bool_or(std::string_view key, bool fallback) const;

  [[nodiscard]] const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  [[nodiscard]] const GgufTensorInfo* find_tensor(std::string_view name) const;
  // A view of the tensor's data in the mapped bytes (valid while this object lives).
  [[nodiscard]] Tensor tensor(const GgufTensorInfo& info) const;

  [[nodiscard]] std::span<const uint8_t> bytes() const { return bytes_; }
  // The file's map; null when parsed from caller-owned bytes.
  [[nodiscard]] const MappedFile* mapping() const { return file_.get(); }

 private:
  GgufFile() = default;
  void parse_all();

  std::unique_ptr<MappedFile> file_;
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::unordered_map<std::string, size_t> metadata_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace pagoda
