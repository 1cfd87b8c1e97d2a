// AVX2 + FMA kernels (8 f32 lanes). Built with -mavx2 -mfma -mf16c; called only when the
// CPU supports them (isa.cpp).
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/vec_dot.h"
#include "core/half.h"

namespace pagoda::cpu {
namespace {

float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

struct V256 {
  static float load_f16(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
  }
  static constexpr int kLanes = 8;
  using I = __m256i;
  using F = __m256;
  static I load_u8(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
  static I load_i8(const uint8_t* p) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
  static I bit_lanes(uint32_t x, int base) {
    const I shifts = _mm256_add_epi32(_mm256_set1_epi32(base), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(x)), shifts), _mm256_set1_epi32(1));
  }
  static I srl(I v, int s) { return _mm256_srl_epi32(v, _mm_cvtsi32_si128(s)); }
  static I shl(I v, int s) { return _mm256_sll_epi32(v, _mm_cvtsi32_si128(s)); }
  static I and_(I v, int m) { return _mm256_and_si256(v, _mm256_set1_epi32(m)); }
  static I xor_(I v, int m) { return _mm256_xor_si256(v, _mm256_set1_epi32(m)); }
  static I or_(I a, I b) { return _mm256_or_si256(a, b); }
  static I sub(I v, int c) { return _mm256_sub_epi32(v, _mm256_set1_epi32(c)); }
  static I sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static F to_f(I v) { return _mm256_cvtepi32_ps(v); }
  static F set1(float f) { return _mm256_set1_ps(f); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub_f(F a, F b) { return _mm256_sub_ps(a, b); }
  static F zero() { return _mm256_setzero_ps(); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static float hsum(F v) { return cpu::hsum(v); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static void f16_row(const uint8_t* p, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      store(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * i))));
    }
    for (; i < n; ++i) y[i] = f16_to_f32(static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8));
  }
  static void bf16_row(const uint8_t* p, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const I w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * i)));
      store(y + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
    }
    for (; i < n; ++i) y[i] = bf16_to_f32(static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8));
  }
};

}  // namespace
}  // namespace pagoda::cpu

#include "backend/cpu/dequant_simd.h"

namespace pagoda::cpu {
namespace {


// An NX x NW block of dot products (NX * NW accumulators fit the 16 ymm registers).
template <int NX, int NW>
void micro(const float* x, const float* w, int64_t k, float* out, int64_t ldo) {
  __m256 acc[NX][NW];
  for (auto& row : acc) {
    for (auto& a : row) a = _mm256_setzero_ps();
  }
  int64_t c = 0;
  for (; c + 8 <= k; c += 8) {
    __m256 wv[NW];
    for (int j = 0; j < NW; ++j) wv[j] = _mm256_loadu_ps(w + j * k + c);
    for (int i = 0; i < NX; ++i) {
      const __m256 xv = _mm256_loadu_ps(x + i * k + c);
      for (int j = 0; j < NW; ++j) acc[i][j] = _mm256_fmadd_ps(xv, wv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < NX; ++i) {
    for (int j = 0; j < NW; ++j) {
      float sum = hsum(acc[i][j]);
      for (int64_t t = c; t < k; ++t) sum += x[i * k + t] * w[j * k + t];
      out[i * ldo + j] = sum;
    }
  }
}

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
  const Micro pair = pick<2>(nw);
  for (; i + 2 <= nx; i += 2) pair(x + i * k, w, k, out + i * ldo, ldo);
  if (i < nx) pick<1>(nw)(x + i * k, w, k, out + i * ldo, ldo);
}

// Activation rows are taken four at a time; a fifth accumulator set would spill on AVX2.
void dot_quant_rows(DType type, const void* w_row, const float* x, int nx, int64_t k, float* out, int64_t ldo) {
  using V = V256;
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

const VecDotKernels& avx2_kernels() {
  static const VecDotKernels kernels{"avx2", simd_dequant_row<V256>, dot_tile, dot_quant_rows};
  return kernels;
}

}  // namespace pagoda::cpu
