// A tiny GGUF writer for tests: builds valid files from metadata and tensors, with hooks
// to break them (counts, versions, offsets, dims) for the corruption tests. Written from
// the GGUF spec (ggml/docs/gguf.md), independently of src/loader.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace pagoda::test {

// Little-endian byte buffer.
class Bytes {
 public:
  template <class T>
  Bytes& put(T value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    data.insert(data.end(), p, p + sizeof(T));
    return *this;
  }
  Bytes& put_string(const std::string& s) {
    put<uint64_t>(s.size());
    data.insert(data.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& append(const Bytes& other) {
    data.insert(data.end(), other.data.begin(), other.data.end());
    return *this;
  }
  std::vector<uint8_t> data;
};

// gguf_type numbers.
enum : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
// ggml_type numbers.
enum : uint32_t { kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ4_0 = 2, kGgmlQ8_0 = 8, kGgmlBF16 = 30 };

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> ne;  // innermost first, as in the file
  uint32_t type = kGgmlF32;
  std::vector<uint8_t> data;                 // exactly the tensor's bytes
  std::optional<uint64_t> offset_override;   // relative offset written instead of the real one
};

class GgufWriter {
 public:
  uint32_t version = 3;
  uint64_t alignment = 32;  // used for layout; write general.alignment yourself to change it
  std::optional<uint64_t> kv_count_override;
  std::optional<uint64_t> tensor_count_override;

  // A key with its type and encoded value bytes.
  void add_raw(const std::string& key, uint32_t type, const Bytes& value) {
    Bytes kv;
    kv.put_string(key).put<uint32_t>(type).append(value);
    kvs_.push_back(kv);
  }
  template <class T>
  void add(const std::string& key, uint32_t type, T value) {
    Bytes b;
    b.put<T>(value);
    add_raw(key, type, b);
  }
  void add_u32(const std::string& key, uint32_t v) { add(key, kU32, v); }
  void add_i32(const std::string& key, int32_t v) { add(key, kI32, v); }
  void add_f32(const std::string& key, float v) { add(key, kF32, v); }
  void add_bool(const std::string& key, bool v) { add(key, kBool, static_cast<uint8_t>(v)); }
  void add_string(const std::string& key, const std::string& v) {
    Bytes b;
    b.put_string(v);
    add_raw(key, kString, b);
  }
  void add_string_array(const std::string& key, const std::vector<std::string>& values) {
    Bytes b;
    b.put<uint32_t>(kString).put<uint64_t>(values.size());
    for (const std::string& s : values) b.put_string(s);
    add_raw(key, kArray, b);
  }
  template <class T>
  void add_array(const std::string& key, uint32_t element_type, const std::vector<T>& values) {
    Bytes b;
    b.put<uint32_t>(element_type).put<uint64_t>(values.size());
    for (const T& v : values) b.put<T>(v);
    add_raw(key, kArray, b);
  }

  void add_tensor(TensorSpec t) { tensors_.push_back(std::move(t)); }
  // An F32 tensor filled with 0, 1, 2, ... (shape innermost first).
  void add_f32_tensor(const std::string& name, std::vector<uint64_t> ne) {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    TensorSpec t{name, std::move(ne), kGgmlF32, {}, std::nullopt};
    for (uint64_t i = 0; i < n; ++i) {
      const float f = static_cast<float>(i);
      const auto* p = reinterpret_cast<const uint8_t*>(&f);
      t.data.insert(t.data.end(), p, p + 4);
    }
    add_tensor(std::move(t));
  }

  [[nodiscard]] std::vector<uint8_t> bytes() const {
    Bytes out;
    out.put<uint32_t>(0x46554747).put<uint32_t>(version);
    out.put<uint64_t>(tensor_count_override.value_or(tensors_.size()));
    out.put<uint64_t>(kv_count_override.value_or(kvs_.size()));
    for (const Bytes& kv : kvs_) out.append(kv);
    uint64_t offset = 0;
    std::vector<uint64_t> offsets;
    for (const TensorSpec& t : tensors_) {
      out.put_string(t.name).put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
      for (uint64_t d : t.ne) out.put<uint64_t>(d);
      out.put<uint32_t>(t.type);
      out.put<uint64_t>(t.offset_override.value_or(offset));
      offsets.push_back(offset);
      offset = align(offset + t.data.size());
    }
    pad(out);
    const size_t data_start = out.data.size();
    for (size_t i = 0; i < tensors_.size(); ++i) {
      out.data.resize(data_start + offsets[i]);
      out.data.insert(out.data.end(), tensors_[i].data.begin(), tensors_[i].data.end());
    }
    return out.data;  // no trailing padding: every proper prefix of the file is invalid
  }

 private:
  [[nodiscard]] uint64_t align(uint64_t n) const {
    return (n + alignment - 1) / alignment * alignment;
  }
  void pad(Bytes& out) const { out.data.resize(align(out.data.size())); }

  std::vector<Bytes> kvs_;
  std::vector<TensorSpec> tensors_;
};

}  // namespace pagoda::test
