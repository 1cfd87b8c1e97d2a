// SIMD dequantization, written once over a vector type V and compiled into each ISA's
// translation unit (vec_dot_avx2.cpp, vec_dot_avx512.cpp) with that ISA's flags. It
// performs exactly the f32 operations of dequant.cpp, lane by lane, so results are
// bit-identical (the ISA files are built with -ffp-contract=off to forbid fusing).
//
// V provides kLanes and, on vectors I (int32 lanes) and F (f32 lanes):
//   load_u8/load_i8(p)   kLanes bytes widened to int32
//   bit_lanes(x, base)   lane l = (x >> (base + l)) & 1
//   srl, shl, and_, or_, xor_, sub (with an int), or_ (two vectors)
//   to_f, set1, mul, add, sub_f, store, and f16_row/bf16_row for plain half rows;
//   zero, load, fma, hsum for the fused dot product; load_f16(p) for scale fields (F16C:
//   exact, like half.h, for every non-NaN value).
// Included inside an anonymous namespace by design: each ISA gets its own copy.
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/cpu/dequant.h"
#include "core/dtype.h"

namespace pagoda::cpu {
namespace {

inline uint32_t simd_load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

template <class V, class Out>
void simd_q4_0(const uint8_t* b, Out&& out) {
  const auto d = V::set1(V::load_f16(b));
  // Chunks go out in element order (all low nibbles, then all high ones), so that the
  // fused dot product sums each lane in the same order as the dequantize-then-dot path:
  // a row's result must not depend on which path its batch size picks.
  for (int j = 0; j < 16; j += V::kLanes) {
    out(j, V::mul(d, V::to_f(V::sub(V::and_(V::load_u8(b + 2 + j), 0x0f), 8))));
  }
  for (int j = 0; j < 16; j += V::kLanes) {
    out(16 + j, V::mul(d, V::to_f(V::sub(V::srl(V::load_u8(b + 2 + j), 4), 8))));
  }
}

template <class V, class Out>
void simd_q4_1(const uint8_t* b, Out&& out) {
  const auto d = V::set1(V::load_f16(b));
  const auto m = V::set1(V::load_f16(b + 2));
  for (int j = 0; j < 16; j += V::kLanes) {  // element order, as in simd_q4_0
    out(j, V::add(V::mul(d, V::to_f(V::and_(V::load_u8(b + 4 + j), 0x0f))), m));
  }
  for (int j = 0; j < 16; j += V::kLanes) {
    out(16 + j, V::add(V::mul(d, V::to_f(V::srl(V::load_u8(b + 4 + j), 4))), m));
  }
}

template <class V, bool kHasMin, class Out>
void simd_q5(const uint8_t* b, Out&& out) {
  const auto d = V::set1(V::load_f16(b));
  const auto m = V::set1(kHasMin ? V::load_f16(b + 2) : 0.0f);
  const uint32_t qh = simd_load_u32(b + (kHasMin ? 4 : 2));
  const uint8_t* qs = b + (kHasMin ? 8 : 6);
  // Element order, as in simd_q4_0: low halves j, then high halves 16 + j.
  for (int half = 0; half < 2; ++half) {
    for (int j = 0; j < 16; j += V::kLanes) {
      const auto q = V::load_u8(qs + j);
      const auto v = half == 0 ? V::or_(V::and_(q, 0x0f), V::shl(V::bit_lanes(qh, j), 4))
                               : V::or_(V::srl(q, 4), V::shl(V::bit_lanes(qh, j + 16), 4));
      if constexpr (kHasMin) {
        out(16 * half + j, V::add(V::mul(d, V::to_f(v)), m));
      } else {
        out(16 * half + j, V::mul(d, V::to_f(V::sub(v, 16))));
      }
    }
  }
}

template <class V, class Out>
void simd_q8_0(const uint8_t* b, Out&& out) {
  const auto d = V::set1(V::load_f16(b));
  for (int j = 0; j < 32; j += V::kLanes) out(j, V::mul(V::to_f(V::load_i8(b + 2 + j)), d));
}

template <class V, class Out>
void simd_q2_k(const uint8_t* b, Out&& out) {
  const uint8_t* scales = b;
  const uint8_t* qs = b + 16;
  const float d = V::load_f16(b + 80);
  const float dmin = V::load_f16(b + 82);
  for (int e = 0; e < 256; e += V::kLanes) {
    const int h = e / 128, s = (e / 32) % 4, l = e % 32;
    const uint8_t sc = scales[e / 16];
    const auto dl = V::set1(d * static_cast<float>(sc & 0x0f));
    const auto ml = V::set1(dmin * static_cast<float>(sc >> 4));
    const auto q = V::and_(V::srl(V::load_u8(qs + 32 * h + l), 2 * s), 3);
    out(e, V::sub_f(V::mul(dl, V::to_f(q)), ml));
  }
}

template <class V, class Out>
void simd_q3_k(const uint8_t* b, Out&& out) {
  const uint8_t* hmask = b;
  const uint8_t* qs = b + 32;
  const uint8_t* scales = b + 96;
  const float d = V::load_f16(b + 108);
  for (int e = 0; e < 256; e += V::kLanes) {
    const int i = e / 16, h = e / 128, s = (e / 32) % 4, l = e % 32;
    const int lo = (scales[i % 8] >> (4 * (i / 8))) & 0x0f;
    const int hi = (scales[8 + i % 4] >> (2 * (i / 4))) & 0x03;
    const auto dl = V::set1(d * static_cast<float>((lo | (hi << 4)) - 32));
    const auto low = V::and_(V::srl(V::load_u8(qs + 32 * h + l), 2 * s), 3);
    const auto missing = V::xor_(V::and_(V::srl(V::load_u8(hmask + l), e / 32), 1), 1);
    out(e, V::mul(dl, V::to_f(V::sub(low, V::shl(missing, 2)))));
  }
}

inline void simd_k_scale_min(const uint8_t* s, int j, int& sc, int& mn) {
  if (j < 4) {
    sc = s[j] & 0x3f;
    mn = s[j + 4] & 0x3f;
  } else {
    sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 2) & 0x30);
    mn = (s[j + 4] >> 4) | ((s[j] >> 2) & 0x30);
  }
}

template <class V, bool kFifthBit, class Out>
void simd_q45_k(const uint8_t* b, Out&& out) {
  const float d = V::load_f16(b);
  const float dmin = V::load_f16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* qs = b + (kFifthBit ? 48 : 16);
  for (int j = 0; j < 8; ++j) {
    int sc, mn;
    simd_k_scale_min(scales, j, sc, mn);
    const auto dj = V::set1(d * static_cast<float>(sc));
    const auto mj = V::set1(dmin * static_cast<float>(mn));
    const int c = j / 2, h = j % 2;
    for (int l = 0; l < 32; l += V::kLanes) {
      auto q = V::and_(V::srl(V::load_u8(qs + 32 * c + l), 4 * h), 0x0f);
      if constexpr (kFifthBit) q = V::or_(q, V::shl(V::and_(V::srl(V::load_u8(qh + l), j), 1), 4));
      out(32 * j + l, V::sub_f(V::mul(dj, V::to_f(q)), mj));
    }
  }
}

template <class V, class Out>
void simd_q6_k(const uint8_t* b, Out&& out) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* scales = reinterpret_cast<const int8_t*>(b + 192);
  const float d = V::load_f16(b + 208);
  for (int e = 0; e < 256; e += V::kLanes) {
    const int h = e / 128, s = (e / 32) % 4, l = e % 32;
    const auto dl = V::set1(d * static_cast<float>(scales[e / 16]));
    const auto low = V::and_(V::srl(V::load_u8(ql + 64 * h + 32 * (s % 2) + l), 4 * (s / 2)), 0x0f);
    const auto high = V::and_(V::srl(V::load_u8(qh + 32 * h + l), 2 * s), 3);
    out(e, V::mul(dl, V::to_f(V::sub(V::or_(low, V::shl(high, 4)), 32))));
  }
}

// Calls visit(e, value) for each kLanes-wide chunk of n elements of a block-quantized type,
// e being the chunk's first element. Returns false for a type without blocks.
template <class V, class Visit>
bool simd_visit_blocks(DType type, const uint8_t* p, int64_t n, Visit&& visit) {
  const DTypeInfo& info = dtype_info(type);
  const int64_t num_blocks = n / info.block_size;
  auto each = [&](auto block_fn) {
    for (int64_t i = 0; i < num_blocks; ++i) {
      const int64_t base = i * info.block_size;
      block_fn(p + i * info.block_bytes, [&](int off, typename V::F v) { visit(base + off, v); });
    }
  };
  switch (type) {
    case DType::Q4_0: each([](const uint8_t* b, auto&& o) { simd_q4_0<V>(b, o); }); return true;
    case DType::Q4_1: each([](const uint8_t* b, auto&& o) { simd_q4_1<V>(b, o); }); return true;
    case DType::Q5_0: each([](const uint8_t* b, auto&& o) { simd_q5<V, false>(b, o); }); return true;
    case DType::Q5_1: each([](const uint8_t* b, auto&& o) { simd_q5<V, true>(b, o); }); return true;
    case DType::Q8_0: each([](const uint8_t* b, auto&& o) { simd_q8_0<V>(b, o); }); return true;
    case DType::Q2_K: each([](const uint8_t* b, auto&& o) { simd_q2_k<V>(b, o); }); return true;
    case DType::Q3_K: each([](const uint8_t* b, auto&& o) { simd_q3_k<V>(b, o); }); return true;
    case DType::Q4_K: each([](const uint8_t* b, auto&& o) { simd_q45_k<V, false>(b, o); }); return true;
    case DType::Q5_K: each([](const uint8_t* b, auto&& o) { simd_q45_k<V, true>(b, o); }); return true;
    case DType::Q6_K: each([](const uint8_t* b, auto&& o) { simd_q6_k<V>(b, o); }); return true;
    default: return false;
  }
}

template <class V>
void simd_dequant_row(DType type, const void* src, float* dst, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  if (type == DType::F16) return V::f16_row(p, dst, n);
  if (type == DType::BF16) return V::bf16_row(p, dst, n);
  const bool done = simd_visit_blocks<V>(type, p, n, [&](int64_t e, typename V::F v) { V::store(dst + e, v); });
  if (!done) dequantize_row(type, src, dst, n);  // F32 copy, or its error
}

// out[i * ldo] = dot(x[i * k ..], w_row) for i < NX, for a block-quantized w_row of k
// elements: each chunk is dequantized in registers and meets all NX activation rows.
template <class V, int NX>
bool simd_dot_quant_row(DType type, const void* w_row, const float* x, int64_t k, float* out, int64_t ldo) {
  typename V::F acc[NX];
  for (auto& a : acc) a = V::zero();
  const bool done = simd_visit_blocks<V>(type, static_cast<const uint8_t*>(w_row), k, [&](int64_t e, typename V::F v) {
    for (int i = 0; i < NX; ++i) acc[i] = V::fma(v, V::load(x + i * k + e), acc[i]);
  });
  for (int i = 0; i < NX; ++i) out[i * ldo] = V::hsum(acc[i]);
  return done;
}

}  // namespace
}  // namespace pagoda::cpu
