#include "core/dtype.h"

#include <gtest/gtest.h>

#include "core/half.h"

namespace pagoda {

TEST(DType, BlockSizesMatchGgml) {
  // ggml's type_traits: Q4_K is 144 bytes per 256 elements, Q6_K 210, Q8_0 34 per 32.
  EXPECT_EQ(dtype_bytes(DType::Q4_K, 512), 288u);
  EXPECT_EQ(dtype_bytes(DType::Q6_K, 256), 210u);
  EXPECT_EQ(dtype_bytes(DType::Q8_0, 64), 68u);
  EXPECT_EQ(dtype_bytes(DType::F16, 3), 6u);
  EXPECT_FALSE(dtype_bytes(DType::Q4_0, 33).has_value());
  EXPECT_FALSE(dtype_bytes(DType::F32, ~0ull).has_value());
}

TEST(Half, RoundTripsEveryF16) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    if (f != f) continue;  // NaN payloads need not round-trip
    ASSERT_EQ(f32_to_f16(f), h) << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);  // tie -> even
  EXPECT_EQ(f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(f32_to_bf16(1.0f + 1.0f / 256), 0x3f80);
  EXPECT_EQ(f32_to_f16(70000.0f), 0x7c00);
}

}  // namespace pagoda
