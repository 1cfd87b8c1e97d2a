// Helpers shared by the CPU backend tests: random inputs, random (but finite) quantized
// weights, and the list of instruction sets this machine can run.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/vec_dot.h"
#include "core/dtype.h"
#include "core/half.h"

namespace pagoda::test {

inline std::vector<std::string> supported_isas() {
  std::vector<std::string> out;
  for (const char* isa : {"portable", "avx2", "avx512"}) {
    if (cpu::isa_supported(isa)) out.emplace_back(isa);
  }
  return out;
}

inline constexpr DType kWeightTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1,
                                         DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q2_K, DType::Q3_K,
                                         DType::Q4_K, DType::Q5_K, DType::Q6_K};

inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> out(n);
  for (float& v : out) v = dist(rng);
  return out;
}

// Byte offsets of the f16 scale fields in one block (ggml-common.h).
inline std::vector<int> f16_fields(DType type) {
  switch (type) {
    case DType::Q4_0: case DType::Q5_0: case DType::Q8_0: return {0};
    case DType::Q4_1: case DType::Q5_1: case DType::Q4_K: case DType::Q5_K: return {0, 2};
    case DType::Q2_K: return {80, 82};
    case DType::Q3_K: return {108};
    case DType::Q6_K: return {208};
    default: return {};
  }
}

// n elements of `type`: random values for plain types; random bytes with moderate f16
// scales for block types (so that no value is inf or NaN).
inline std::vector<uint8_t> random_weights(std::mt19937& rng, DType type, int64_t n) {
  const DTypeInfo& info = dtype_info(type);
  const size_t bytes = *dtype_bytes(type, static_cast<uint64_t>(n));
  std::vector<uint8_t> out(bytes);
  if (!info.quantized) {
    const std::vector<float> v = random_floats(rng, static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      if (type == DType::F32) {
        std::memcpy(out.data() + 4 * i, &v[static_cast<size_t>(i)], 4);
      } else {
        const uint16_t h = type == DType::F16 ? f32_to_f16(v[static_cast<size_t>(i)]) : f32_to_bf16(v[static_cast<size_t>(i)]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
    }
    return out;
  }
  std::uniform_int_distribution<int> byte(0, 255);
  std::normal_distribution<float> scale(0.0f, 0.05f);
  for (uint8_t& b : out) b = static_cast<uint8_t>(byte(rng));
  for (size_t block = 0; block < bytes / static_cast<size_t>(info.block_bytes); ++block) {
    for (int off : f16_fields(type)) {
      const uint16_t h = f32_to_f16(scale(rng));
      std::memcpy(out.data() + block * static_cast<size_t>(info.block_bytes) + static_cast<size_t>(off), &h, 2);
    }
  }
  return out;
}

// The [n, 10] rows of x split into columns 0-5 (a, [n, 6]), 6-8 (b, [n, 3]) and 9 (c, [n, 1]):
// the layout the split_columns tests use. Returns the first (row, column) that differs, or -1.
inline int64_t first_split_mismatch(const std::vector<float>& x, int64_t n, const std::vector<float>& a,
                                    const std::vector<float>& b, const std::vector<float>& c) {
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < 10; ++j) {
      const float got = j < 6 ? a[size_t(r * 6 + j)] : j < 9 ? b[size_t(r * 3 + j - 6)] : c[size_t(r)];
      if (got != x[size_t(r * 10 + j)]) return r * 10 + j;
    }
  }
  return -1;
}

}  // namespace pagoda::test
