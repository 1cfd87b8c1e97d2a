// Parsing of GGUF files. The layout (little-endian throughout):
//
//   "GGUF" u32 version, u64 tensor_count, u64 kv_count
//   kv_count x   { string key, u32 type, value }
//   tensor_count x { string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset }
//   padding to general.alignment, then the data section (tensor offsets are relative to it)
//
// A string is u64 length + bytes; an array is u32 element type + u64 count + elements.
#include "loader/gguf.h"

#include <bit>
#include <cstring>
#include <limits>

#include "core/error.h"

namespace pagoda {

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader assumes a little-endian host");

// Smallest encodings, used to refuse a count before anything is allocated for it:
// a key/value is a key length (8), a type (4) and at least one value byte; a tensor
// info is a name length (8), n_dims (4), a type (4) and an offset (8).
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;

// A bounds-checked cursor over the file's bytes.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  [[nodiscard]] uint64_t pos() const { return pos_; }
  [[nodiscard]] uint64_t remaining() const { return bytes_.size() - pos_; }

  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  std::string read_string(const char* what) {
    const uint64_t length = read<uint64_t>(what);
    if (length > remaining()) {
      fail("length ", length, " of ", what, " at offset ", pos_ - 8, " exceeds the ", remaining(),
           " bytes left in the file");
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<size_t>(length));
    pos_ += length;
    return s;
  }

 private:
  void need(uint64_t n, const char* what) const {
    if (n > remaining()) fail("file truncated at offset ", pos_, " while reading ", what);
  }

  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
};

bool is_valid_type(uint32_t type) { return type <= static_cast<uint32_t>(GgufType::Float64); }

// Bytes one value of this type takes at least (exactly, for fixed-size types).
uint64_t min_value_bytes(GgufType type) {
  switch (type) {
    case GgufType::Uint8:
    case GgufType::Int8:
    case GgufType::Bool: return 1;
    case GgufType::Uint16:
    case GgufType::Int16: return 2;
    case GgufType::Uint32:
    case GgufType::Int32:
    case GgufType::Float32: return 4;
    case GgufType::Uint64:
    case GgufType::Int64:
    case GgufType::Float64:
    case GgufType::String: return 8;  // a string's length
    case GgufType::Array: return 12;  // element type + count
  }
  return 1;
}

GgufValue read_value(Reader& in, GgufType type, const std::string& key, int depth);

std::shared_ptr<GgufArray> read_array(Reader& in, const std::string& key, int depth) {
  if (depth >= kGgufMaxArrayDepth) {
    fail("key ", key, ": arrays nested deeper than ", kGgufMaxArrayDepth, " levels");
  }
  const uint32_t raw_type = in.read<uint32_t>("array element type");
  if (!is_valid_type(raw_type)) fail("key ", key, ": unknown array element type ", raw_type);
  auto array = std::make_shared<GgufArray>();
  array->element_type = static_cast<GgufType>(raw_type);
  const uint64_t count = in.read<uint64_t>("array length");
  if (count > kGgufMaxArrayLength) {
    fail("key ", key, ": array of ", count, " values is longer than the limit of ",
         kGgufMaxArrayLength);
  }
  if (count > in.remaining() / min_value_bytes(array->element_type)) {
    fail("key ", key, ": array of ", count, " ", gguf_type_name(array->element_type),
         " values exceeds the ", in.remaining(), " bytes left in the file");
  }
  array->values.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    array->values.push_back(read_value(in, array->element_type, key, depth + 1));
  }
  return array;
}

GgufValue read_value(Reader& in, GgufType type, const std::string& key, int depth) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufType::Uint8: v.value = uint64_t{in.read<uint8_t>("uint8 value")}; break;
    case GgufType::Int8: v.value = int64_t{in.read<int8_t>("int8 value")}; break;
    case GgufType::Uint16: v.value = uint64_t{in.read<uint16_t>("uint16 value")}; break;
    case GgufType::Int16: v.value = int64_t{in.read<int16_t>("int16 value")}; break;
    case GgufType::Uint32: v.value = uint64_t{in.read<uint32_t>("uint32 value")}; break;
    case GgufType::Int32: v.value = int64_t{in.read<int32_t>("int32 value")}; break;
    case GgufType::Uint64: v.value = in.read<uint64_t>("uint64 value"); break;
    case GgufType::Int64: v.value = in.read<int64_t>("int64 value"); break;
    case GgufType::Float32: v.value = double{in.read<float>("float32 value")}; break;
    case GgufType::Float64: v.value = in.read<double>("float64 value"); break;
    case GgufType::Bool: {
      const uint8_t b = in.read<uint8_t>("bool value");
      if (b > 1) fail("key ", key, ": bool value ", int{b}, " is neither 0 nor 1");
      v.value = b == 1;
      break;
    }
    case GgufType::String: v.value = in.read_string("string value"); break;
    case GgufType::Array: v.value = read_array(in, key, depth); break;
  }
  return v;
}

uint64_t align_up(uint64_t offset, uint64_t alignment) {
  const uint64_t rem = offset % alignment;
  return rem == 0 ? offset : offset + (alignment - rem);
}

}  // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  auto file = std::make_unique<MappedFile>(path);
  std::unique_ptr<GgufFile> gguf(new GgufFile());
  gguf->bytes_ = file->bytes();
  gguf->file_ = std::move(file);
  try {
    gguf->parse_all();
  } catch (const Error& e) {
    fail(path, ": ", e.what());
  }
  return gguf;
}

std::unique_ptr<GgufFile> GgufFile::parse(std::span<const uint8_t> bytes) {
  std::unique_ptr<GgufFile> gguf(new GgufFile());
  gguf->bytes_ = bytes;
  gguf->parse_all();
  return gguf;
}

void GgufFile::parse_all() {
  Reader in(bytes_);
  if (in.read<uint32_t>("magic") != kMagic) fail("not a GGUF file (bad magic)");
  version_ = in.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3) {
    const uint32_t swapped = __builtin_bswap32(version_);
    if (swapped >= 1 && swapped <= 3) {
      fail("big-endian GGUF files are not supported");
    }
    if (version_ == 1)
      fail("GGUF version 1 is not supported (re-convert the model with a current llama.cpp)");
    fail("unsupported GGUF version ", version_, " (supported: 2, 3)");
  }

  const uint64_t tensor_count = in.read<uint64_t>("tensor count");
  const uint64_t kv_count = in.read<uint64_t>("metadata count");
  if (kv_count > in.remaining() / kMinKvBytes) {
    fail("metadata count ", kv_count, " exceeds what the ", in.remaining(),
         " bytes left can hold (truncated or corrupt file)");
  }

  metadata_.reserve(static_cast<size_t>(kv_count));
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key = in.read_string("metadata key");
    if (metadata_index_.count(key) != 0) fail("duplicate metadata key ", key);
    const uint32_t raw_type = in.read<uint32_t>("metadata value type");
    if (!is_valid_type(raw_type)) fail("key ", key, ": unknown value type ", raw_type);
    GgufValue value = read_value(in, static_cast<GgufType>(raw_type), key, 0);
    metadata_index_.emplace(key, metadata_.size());
    metadata_.emplace_back(std::move(key), std::move(value));
  }

  if (has("general.alignment")) {
    const int64_t alignment = get_int("general.alignment");
    if (alignment <= 0 || static_cast<uint64_t>(alignment) > kGgufMaxAlignment ||
        !std::has_single_bit(static_cast<uint64_t>(alignment))) {
      fail("general.alignment ", alignment, " is not a power of two in [1, ", kGgufMaxAlignment,
           "]");
    }
    alignment_ = static_cast<uint64_t>(alignment);
  }

  if (tensor_count > in.remaining() / kMinTensorInfoBytes) {
    fail("tensor count ", tensor_count, " exceeds what the ", in.remaining(),
         " bytes left can hold (truncated or corrupt file)");
  }
  tensors_.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensorInfo info;
    info.name = in.read_string("tensor name");
    if (tensor_index_.count(info.name) != 0) fail("duplicate tensor name ", info.name);

    const uint32_t n_dims = in.read<uint32_t>("tensor dimension count");
    if (n_dims < 1 || n_dims > kGgufMaxDims) {
      fail("tensor ", info.name, ": ", n_dims, " dimensions (supported: 1 to ", kGgufMaxDims, ")");
    }
    uint64_t ne[kGgufMaxDims] = {};
    int64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      ne[d] = in.read<uint64_t>("tensor dimension");
      if (ne[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(numel, static_cast<int64_t>(ne[d]), &numel)) {
        fail("tensor ", info.name, ": element count overflows");
      }
    }
    // GGUF lists ne[] innermost first; Shape is outermost first.
    for (uint32_t d = n_dims; d-- > 0;) info.shape.push_back(static_cast<int64_t>(ne[d]));

    const uint32_t ggml_type = in.read<uint32_t>("tensor type");
    const std::optional<DType> dtype = dtype_from_ggml(ggml_type);
    if (!dtype) fail("tensor ", info.name, ": unknown or unsupported ggml type ", ggml_type);
    info.dtype = *dtype;
    const int block_size = dtype_info(info.dtype).block_size;
    if (ne[0] % static_cast<uint64_t>(block_size) != 0) {
      fail("tensor ", info.name, ": row length ", ne[0], " is not a multiple of the ",
           dtype_name(info.dtype), " block size ", block_size);
    }
    const std::optional<size_t> nbytes = dtype_bytes(info.dtype, static_cast<uint64_t>(numel));
    if (!nbytes) fail("tensor ", info.name, ": byte size overflows");
    info.nbytes = *nbytes;

    info.offset = in.read<uint64_t>("tensor offset");  // relative for now
    if (info.offset % alignment_ != 0) {
      fail("tensor ", info.name, ": offset ", info.offset, " is not a multiple of the alignment ",
           alignment_);
    }
    tensor_index_.emplace(info.name, tensors_.size());
    tensors_.push_back(std::move(info));
  }

  data_offset_ = align_up(in.pos(), alignment_);
  const uint64_t size = bytes_.size();
  for (GgufTensorInfo& info : tensors_) {
    // Compared piecewise so that no sum can overflow.
    if (data_offset_ > size || info.offset > size - data_offset_) {
      fail("tensor ", info.name, ": data offset ", info.offset, " is past the end of the file");
    }
    if (info.nbytes > size - data_offset_ - info.offset) {
      fail("tensor ", info.name, ": data (", info.nbytes, " bytes at offset ", info.offset,
           ") extends past the end of the file");
    }
    info.offset += data_offset_;
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = metadata_index_.find(std::string(key));
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Tensor GgufFile::tensor(const GgufTensorInfo& info) const {
  return Tensor::view(info.dtype, info.shape, bytes_.data() + info.offset);
}

}  // namespace pagoda
