#include "backend/cpu/dequant.h"

#include <cstring>

#include "core/error.h"
#include "core/half.h"

// Block layouts follow ggml-common.h. Every f32 expression below mirrors the numpy
// expression of gguf.quants (e.g. Q4_1 is (d * q) + m, two roundings, no fused
// multiply-add; K-quant sub-block scales are d * sc rounded to f32 first).
namespace pagoda::cpu {

namespace {

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

float load_f16(const uint8_t* p) { return f16_to_f32(load_u16(p)); }

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Q4_0: d (f16), qs[16]. Element j is the low nibble of qs[j], element j + 16 the high.
void block_q4_0(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>((qs[j] & 0x0f) - 8);
    y[j + 16] = d * static_cast<float>((qs[j] >> 4) - 8);
  }
}

// Q4_1: d, m (f16), qs[16].
void block_q4_1(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const float m = load_f16(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(qs[j] & 0x0f) + m;
    y[j + 16] = d * static_cast<float>(qs[j] >> 4) + m;
  }
}

// Q5_0: d, qh (u32: bit j is the fifth bit of element j), qs[16].
void block_q5_0(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const uint32_t qh = load_u32(b + 2);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
    const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
    y[j] = d * static_cast<float>(lo - 16);
    y[j + 16] = d * static_cast<float>(hi - 16);
  }
}

// Q5_1: d, m, qh, qs[16].
void block_q5_1(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const float m = load_f16(b + 2);
  const uint32_t qh = load_u32(b + 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
    const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
    y[j] = d * static_cast<float>(lo) + m;
    y[j + 16] = d * static_cast<float>(hi) + m;
  }
}

// Q8_0: d, qs[32] (int8).
void block_q8_0(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

// Q2_K: scales[16] (low nibble scale, high nibble min), qs[64], d, dmin. Element
// 128 h + 32 s + l is bits 2s..2s+1 of qs[32 h + l]; its sub-block is element / 16.
void block_q2_k(const uint8_t* b, float* y) {
  const uint8_t* scales = b;
  const uint8_t* qs = b + 16;
  const float d = load_f16(b + 80);
  const float dmin = load_f16(b + 82);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, s = (e / 32) % 4, l = e % 32;
    const uint8_t sc = scales[e / 16];
    const float dl = d * static_cast<float>(sc & 0x0f);
    const float ml = dmin * static_cast<float>(sc >> 4);
    const int q = (qs[32 * h + l] >> (2 * s)) & 3;
    y[e] = dl * static_cast<float>(q) - ml;
  }
}

// Q3_K: hmask[32], qs[64], scales[12] (16 packed 6-bit values, offset 32), d.
// Element e = 128 h + 32 s + l: low bits from qs as in Q2_K, and 4 is subtracted
// unless bit e / 32 of hmask[l] is set.
void block_q3_k(const uint8_t* b, float* y) {
  const uint8_t* hmask = b;
  const uint8_t* qs = b + 32;
  const uint8_t* scales = b + 96;
  const float d = load_f16(b + 108);
  float dl[16];
  for (int i = 0; i < 16; ++i) {
    const int lo = (scales[i % 8] >> (4 * (i / 8))) & 0x0f;
    const int hi = (scales[8 + i % 4] >> (2 * (i / 4))) & 0x03;
    dl[i] = d * static_cast<float>((lo | (hi << 4)) - 32);
  }
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, s = (e / 32) % 4, l = e % 32;
    const int low = (qs[32 * h + l] >> (2 * s)) & 3;
    const int high_missing = ((hmask[l] >> (e / 32)) & 1) ^ 1;
    y[e] = dl[e / 16] * static_cast<float>(low - 4 * high_missing);
  }
}

// The 6-bit scales and mins of Q4_K / Q5_K's eight sub-blocks, packed in 12 bytes.
void k_scale_min(const uint8_t* s, int j, int& sc, int& mn) {
  if (j < 4) {
    sc = s[j] & 0x3f;
    mn = s[j + 4] & 0x3f;
  } else {
    sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 2) & 0x30);
    mn = (s[j + 4] >> 4) | ((s[j] >> 2) & 0x30);
  }
}

// Q4_K: d, dmin, scales[12], qs[128]. Element 64 c + 32 h + l is nibble h of
// qs[32 c + l]; sub-block element / 32.
void block_q4_k(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const float dmin = load_f16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qs = b + 16;
  for (int j = 0; j < 8; ++j) {
    int sc, mn;
    k_scale_min(scales, j, sc, mn);
    const float dj = d * static_cast<float>(sc);
    const float mj = dmin * static_cast<float>(mn);
    const int c = j / 2, h = j % 2;
    for (int l = 0; l < 32; ++l) {
      const int q = (qs[32 * c + l] >> (4 * h)) & 0x0f;
      y[32 * j + l] = dj * static_cast<float>(q) - mj;
    }
  }
}

// Q5_K: d, dmin, scales[12], qh[32], qs[128]. As Q4_K, plus bit j of qh[l] as the
// fifth bit of element 32 j + l.
void block_q5_k(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const float dmin = load_f16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* qs = b + 48;
  for (int j = 0; j < 8; ++j) {
    int sc, mn;
    k_scale_min(scales, j, sc, mn);
    const float dj = d * static_cast<float>(sc);
    const float mj = dmin * static_cast<float>(mn);
    const int c = j / 2, h = j % 2;
    for (int l = 0; l < 32; ++l) {
      const int q = ((qs[32 * c + l] >> (4 * h)) & 0x0f) | (((qh[l] >> j) & 1) << 4);
      y[32 * j + l] = dj * static_cast<float>(q) - mj;
    }
  }
}

// Q6_K: ql[128], qh[64], scales[16] (int8), d. Element e = 128 h + 32 s + l: low
// nibble (s / 2) of ql[64 h + 32 (s % 2) + l], high bits 2s..2s+1 of qh[32 h + l];
// sub-block e / 16.
void block_q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* scales = reinterpret_cast<const int8_t*>(b + 192);
  const float d = load_f16(b + 208);
  float dl[16];
  for (int i = 0; i < 16; ++i) dl[i] = d * static_cast<float>(scales[i]);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, s = (e / 32) % 4, l = e % 32;
    const int low = (ql[64 * h + 32 * (s % 2) + l] >> (4 * (s / 2))) & 0x0f;
    const int high = (qh[32 * h + l] >> (2 * s)) & 0x03;
    y[e] = dl[e / 16] * static_cast<float>((low | (high << 4)) - 32);
  }
}

using BlockFn = void (*)(const uint8_t*, float*);

BlockFn block_fn(DType type) {
  switch (type) {
    case DType::Q4_0: return block_q4_0;
    case DType::Q4_1: return block_q4_1;
    case DType::Q5_0: return block_q5_0;
    case DType::Q5_1: return block_q5_1;
    case DType::Q8_0: return block_q8_0;
    case DType::Q2_K: return block_q2_k;
    case DType::Q3_K: return block_q3_k;
    case DType::Q4_K: return block_q4_k;
    case DType::Q5_K: return block_q5_k;
    case DType::Q6_K: return block_q6_k;
    default: return nullptr;
  }
}

}  // namespace

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  switch (type) {
    case DType::F32: std::memcpy(dst, p, static_cast<size_t>(n) * 4); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(load_u16(p + 2 * i));
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(p + 2 * i));
      return;
    default: break;
  }
  const BlockFn fn = block_fn(type);
  if (fn == nullptr) fail("dequantize: ", dtype_name(type), " is not a weight format");
  const DTypeInfo& info = dtype_info(type);
  PAGODA_CHECK(n % info.block_size == 0);
  for (int64_t b = 0; b < n / info.block_size; ++b) {
    fn(p + b * info.block_bytes, dst + b * info.block_size);
  }
}

}  // namespace pagoda::cpu
