// Every ISA's dequantizer is bit-identical to the scalar reference (which
// tests/python/test_dequant.py checks against the gguf package).
#include "backend/cpu/dequant.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "backend/cpu/vec_dot.h"
#include "backend_test_util.h"
#include "core/error.h"
#include "core/half.h"

namespace pagoda {
namespace {

TEST(CpuDequant, EveryIsaMatchesReferenceBitForBit) {
  std::mt19937 rng(7);
  for (const std::string& isa : test::supported_isas()) {
    const cpu::VecDotKernels& kernels = cpu::kernels_for_isa(isa.c_str());
    for (DType type : test::kWeightTypes) {
      if (type == DType::F32) continue;  // matmul reads F32 in place
      const int64_t n = dtype_info(type).block_size == 1 ? 1000 + 13 : 256 * 16;
      const std::vector<uint8_t> raw = test::random_weights(rng, type, n);
      std::vector<float> ref(static_cast<size_t>(n)), got(static_cast<size_t>(n), -1.0f);
      cpu::dequantize_row(type, raw.data(), ref.data(), n);
      kernels.dequant_row(type, raw.data(), got.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got[static_cast<size_t>(i)]), std::bit_cast<uint32_t>(ref[static_cast<size_t>(i)]))
            << isa << " " << dtype_name(type) << " element " << i;
      }
    }
  }
}

// A hand-built Q8_0 and Q4_1 block, decoded per ggml-common.h's layout by hand.
TEST(CpuDequant, HandBuiltBlocks) {
  uint8_t q8[34];
  const uint16_t half = f32_to_f16(0.5f);
  std::memcpy(q8, &half, 2);
  for (int i = 0; i < 32; ++i) q8[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(i - 16));
  float y[32];
  cpu::dequantize_row(DType::Q8_0, q8, y, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], 0.5f * static_cast<float>(i - 16));

  uint8_t q41[20];
  const uint16_t d = f32_to_f16(2.0f), m = f32_to_f16(-1.0f);
  std::memcpy(q41, &d, 2);
  std::memcpy(q41 + 2, &m, 2);
  for (int i = 0; i < 16; ++i) q41[4 + i] = static_cast<uint8_t>(i | (15 - i) << 4);
  cpu::dequantize_row(DType::Q4_1, q41, y, 32);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(y[i], 2.0f * static_cast<float>(i) - 1.0f);             // low nibbles first
    EXPECT_EQ(y[16 + i], 2.0f * static_cast<float>(15 - i) - 1.0f);  // then high nibbles
  }
}

TEST(CpuDequant, RejectsNonWeightType) {
  int32_t v = 1;
  float y;
  EXPECT_THROW(cpu::dequantize_row(DType::I32, &v, &y, 1), Error);
}

TEST(CpuIsa, UnknownIsaIsAnError) {
  EXPECT_THROW((void)cpu::kernels_for_isa("sse9"), Error);
  EXPECT_TRUE(cpu::isa_supported("portable"));
}

}  // namespace
}  // namespace pagoda
