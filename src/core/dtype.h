// Element types of tensors, including GGML's block-quantized weight formats.
// A quantized row of n elements is n / block_size blocks of block_bytes each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace pagoda {

enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  I32,
  Q4_0,
  Q4_1,
  Q5_0,
  Q5_1,
  Q8_0,
  Q2_K,
  Q3_K,
  Q4_K,
  Q5_K,
  Q6_K,
};

struct DTypeInfo {
  std::string_view name;
  int block_size;   // elements per block (1 for plain types)
  int block_bytes;  // bytes per block
  bool quantized;
};

[[nodiscard]] const DTypeInfo& dtype_info(DType type);
[[nodiscard]] inline std::string_view dtype_name(DType type) { return dtype_info(type).name; }

// Bytes taken by n elements; nullopt if n is not a whole number of blocks or overflows.
[[nodiscard]] std::optional<size_t> dtype_bytes(DType type, uint64_t n);

// GGML's numeric type ids (ggml_type), as stored in GGUF tensor infos.
[[nodiscard]] std::optional<DType> dtype_from_ggml(uint32_t ggml_type);

}  // namespace pagoda
