#include "core/dtype.h"

#include <array>
#include <limits>

namespace pagoda {

namespace {

constexpr std::array<DTypeInfo, 14> kInfos = {{
    {"F32", 1, 4, false},
    {"F16", 1, 2, false},
    {"BF16", 1, 2, false},
    {"I32", 1, 4, false},
    {"Q4_0", 32, 18, true},
    {"Q4_1", 32, 20, true},
    {"Q5_0", 32, 22, true},
    {"Q5_1", 32, 24, true},
    {"Q8_0", 32, 34, true},
    {"Q2_K", 256, 84, true},
    {"Q3_K", 256, 110, true},
    {"Q4_K", 256, 144, true},
    {"Q5_K", 256, 176, true},
    {"Q6_K", 256, 210, true},
}};

}  // namespace

const DTypeInfo& dtype_info(DType type) { return kInfos[static_cast<size_t>(type)]; }

std::optional<size_t> dtype_bytes(DType type, uint64_t n) {
  const DTypeInfo& info = dtype_info(type);
  if (n % static_cast<uint64_t>(info.block_size) != 0) return std::nullopt;
  const uint64_t blocks = n / static_cast<uint64_t>(info.block_size);
  if (blocks > std::numeric_limits<size_t>::max() / static_cast<uint64_t>(info.block_bytes)) {
    return std::nullopt;
  }
  return static_cast<size_t>(blocks * static_cast<uint64_t>(info.block_bytes));
}

std::optional<DType> dtype_from_ggml(uint32_t ggml_type) {
  switch (ggml_type) {
    case 0: return DType::F32;
    case 1: return DType::F16;
    case 2: return DType::Q4_0;
    case 3: return DType::Q4_1;
    case 6: return DType::Q5_0;
    case 7: return DType::Q5_1;
    case 8: return DType::Q8_0;
    case 10: return DType::Q2_K;
    case 11: return DType::Q3_K;
    case 12: return DType::Q4_K;
    case 13: return DType::Q5_K;
    case 14: return DType::Q6_K;
    case 26: return DType::I32;
    case 30: return DType::BF16;
    default: return std::nullopt;
  }
}

}  // namespace pagoda
