// AVX-512 kernels (16 f32 lanes). Built with -mavx512f/bw/vl/dq -mfma -mf16c; called only
// when the CPU supports them (isa.cpp).
// GCC 12's AVX-512 headers build "undefined" vectors by self-initialization, which
// -Wuninitialized reports wherever extract/shuffle intrinsics are inlined: a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/vec_dot.h"
#include "core/half.h"

namespace pagoda::cpu {
namespace {

float hsum(__m512 v) {
  const __m256 lo = _mm512_castps512_ps256(v);
  const __m256 hi = _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xee));
  const __m256 s8 = _mm256_add_ps(lo, hi);
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

struct V512 {
  static float load_f16(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
  }
  static constexpr int kLanes = 16;
  using I = __m512i;
  using F = __m512;
  static I load_u8(const uint8_t* p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static I load_i8(const uint8_t* p) { return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static I bit_lanes(uint32_t x, int base) {
    const I shifts = _mm512_add_epi32(_mm512_set1_epi32(base),
                                      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    return _mm512_and_si512(_mm512_srlv_epi32(_mm512_set1_epi32(static_cast<int>(x)), shifts), _mm512_set1_epi32(1));
  }
  static I srl(I v, int s) { return _mm512_srl_epi32(v, _mm_cvtsi32_si128(s)); }
  static I shl(I v, int s) { return _mm512_sll_epi32(v, _mm_cvtsi32_si128(s)); }
  static I and_(I v, int m) { return _mm512_and_si512(v, _mm512_set1_epi32(m)); }
  static I xor_(I v, int m) { return _mm512_xor_si512(v, _mm512_set1_epi32(m)); }
  static I or_(I a, I b) { return _mm512_or_si512(a, b); }
  static I sub(I v, int c) { return _mm512_sub_epi32(v, _mm512_set1_epi32(c)); }
  static I sub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static F to_f(I v) { return _mm512_cvtepi32_ps(v); }
  static F set1(float f) { return _mm512_set1_ps(f); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub_f(F a, F b) { return _mm512_sub_ps(a, b); }
  static F zero() { return _mm512_setzero_ps(); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static float hsum(F v) { return cpu::hsum(v); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static void f16_row(const uint8_t* p, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      store(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * i))));
    }
    for (; i < n; ++i) y[i] = f16_to_f32(static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8));
  }
  static void bf16_row(const uint8_t* p, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const I w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * i)));
      store(y + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
    for (; i < n; ++i) y[i] = bf16_to_f32(static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8));
  }
};

}  // namespace
}  // namespace pagoda::cpu

#include "backend/cpu/dequant_simd.h"

namespace pagoda::cpu {
namespace {


// An NX x NW block of dot products: each loaded x vector meets NW weight vectors.
template <int NX, int NW>
void micro(const float* x, const float* w, int64_t k, float* out, int64_t ldo) {
  __m512 acc[NX][NW];
  for (auto& row : acc) {
    for (auto& a : row) a = _mm512_setzero_ps();
  }
  int64_t c = 0;
  for (; c + 16 <= k; c += 16) {
    __m512 wv[NW];
    for (int j = 0; j < NW; ++j) wv[j] = _mm512_loadu_ps(w + j * k + c);
    for (int i = 0; i < NX; ++i) {
      const __m512 xv = _mm512_loadu_ps(x + i * k + c);
      for (int j = 0; j < NW; ++j) acc[i][j] = _mm512_fmadd_ps(xv, wv[j], acc[i][j]);
    }
  }
  if (c < k) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (k - c)) - 1);
    __m512 wv[NW];
    for (int j = 0; j < NW; ++j) wv[j] = _mm512_maskz_loadu_ps(mask, w + j * k + c);
    for (int i = 0; i < NX; ++i) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x + i * k + c);
      for (int j = 0; j < NW; ++j) acc[i][j] = _mm512_fmadd_ps(xv, wv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < NX; ++i) {
    for (int j = 0; j < NW; ++j) out[i * ldo + j] = hsum(acc[i][j]);
  }
}

constexpr int kXRows = 4;
using Micro = void (*)(const float*, const float*, int64_t, float*, int64_t);

template <int NX>
constexpr Micro pick(int nw) {
  switch (nw) {
    case 1: return micro<NX, 1>;
    case 2: return micro<NX, 2>;
    case 3: return micro<NX, 3>;
    default: return micro<NX, 4>;
  }
}

void dot_tile(const float* x, int nx, const float* w, int nw, int64_t k, float* out, int64_t ldo) {
  int i = 0;
  const Micro full = pick<kXRows>(nw);
  for (; i + kXRows <= nx; i += kXRows) full(x + i * k, w, k, out + i * ldo, ldo);
  const int rest = nx - i;
  if (rest == 0) return;
  const Micro tail = rest == 1 ? pick<1>(nw) : rest == 2 ? pick<2>(nw) : pick<3>(nw);
  tail(x + i * k, w, k, out + i * ldo, ldo);
}

// Activation rows are taken four at a time; a fifth accumulator set would spill on AVX2.
void dot_quant_rows(DType type, const void* w_row, const float* x, int nx, int64_t k, float* out, int64_t ldo) {
  using V = V512;
  int i = 0;
  for (; i + 4 <= nx; i += 4) simd_dot_quant_row<V, 4>(type, w_row, x + i * k, k, out + i * ldo, ldo);
  switch (nx - i) {
    case 1: simd_dot_quant_row<V, 1>(type, w_row, x + i * k, k, out + i * ldo, ldo); break;
    case 2: simd_dot_quant_row<V, 2>(type, w_row, x + i * k, k, out + i * ldo, ldo); break;
    case 3: simd_dot_quant_row<V, 3>(type, w_row, x + i * k, k, out + i * ldo, ldo); break;
    default: break;
  }
}

}  // namespace

const VecDotKernels& avx512_kernels() {
  static const VecDotKernels kernels{"avx512", simd_dequant_row<V512>, dot_tile, dot_quant_rows};
  return kernels;
}

}  // namespace pagoda::cpu
