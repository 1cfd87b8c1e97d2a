// Backend::fused_matmul written out in double precision, for the CPU and CUDA tests:
// out (+)= [act-gated] (rms_norm(x) * norm or x) @ w^T.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/backend.h"

namespace pagoda::test {

struct FusedMatmulCase {
  int64_t n = 0, k = 0, m = 0;          // x [n, k], w [m, k]
  const std::vector<float>* norm = nullptr;  // [k], or none
  float eps = 1e-5f;
  GatedActivation gated = GatedActivation::None;
  bool accumulate = false;
};

// out: [n, m] (gated: [n, m / 2]) holding its starting values (read when accumulating).
inline std::vector<double> fused_matmul_reference(const FusedMatmulCase& c, const std::vector<float>& x,
                                                  const std::vector<float>& w, const std::vector<float>& out) {
  const bool gated = c.gated != GatedActivation::None;
  const int64_t width = gated ? c.m / 2 : c.m;
  std::vector<double> result(static_cast<size_t>(c.n * width));
  std::vector<double> input(static_cast<size_t>(c.k)), product(static_cast<size_t>(c.m));
  for (int64_t r = 0; r < c.n; ++r) {
    double inv = 1.0;
    if (c.norm != nullptr) {
      double ss = 0;
      for (int64_t i = 0; i < c.k; ++i) ss += double(x[r * c.k + i]) * x[r * c.k + i];
      inv = 1.0 / std::sqrt(ss / double(c.k) + c.eps);
    }
    for (int64_t i = 0; i < c.k; ++i) input[i] = x[r * c.k + i] * inv * (c.norm != nullptr ? (*c.norm)[i] : 1.0);
    for (int64_t j = 0; j < c.m; ++j) {
      double dot = 0;
      for (int64_t i = 0; i < c.k; ++i) dot += input[i] * w[j * c.k + i];
      product[j] = dot;
    }
    for (int64_t j = 0; j < width; ++j) {
      double v = product[j];
      if (gated) {
        const double g = product[j], u = product[width + j];
        if (c.gated == GatedActivation::Silu) {
          v = g / (1.0 + std::exp(-g)) * u;
        } else {
          v = 0.5 * g * (1.0 + std::tanh(0.7978845608028654 * (g + 0.044715 * g * g * g))) * u;
        }
      }
      result[r * width + j] = (c.accumulate ? out[r * width + j] : 0.0) + v;
    }
  }
  return result;
}

// ||got - ref|| / ||ref||.
inline double relative_error_to(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / (den > 1e-30 ? den : 1e-30));
}

}  // namespace pagoda::test
