#include <cstdlib>
#include <cstring>

#include "backend/cpu/vec_dot.h"
#include "core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace pagoda::cpu {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// F16C straight from CPUID: clang's __builtin_cpu_supports does not know "f16c".
bool has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}
#endif

}  // namespace

bool isa_supported(const char* isa) {
  if (std::strcmp(isa, "portable") == 0) return true;
#if defined(__x86_64__) || defined(__i386__)
  if (std::strcmp(isa, "avx2") == 0) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  }
  if (std::strcmp(isa, "avx512") == 0) {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           isa_supported("avx2");
  }
#endif
  return false;
}

const VecDotKernels& kernels_for_isa(const char* isa) {
  const bool known = std::strcmp(isa, "avx512") == 0 || std::strcmp(isa, "avx2") == 0 ||
                     std::strcmp(isa, "portable") == 0;
  if (!known) fail("unknown CPU ISA '", isa, "' (expected avx512, avx2 or portable)");
  if (!isa_supported(isa)) fail("this CPU does not support ", isa);
  if (std::strcmp(isa, "avx512") == 0) return avx512_kernels();
  if (std::strcmp(isa, "avx2") == 0) return avx2_kernels();
  return portable_kernels();
}

const VecDotKernels& default_kernels() {
  if (const char* env = std::getenv("PAGODA_CPU_ISA"); env != nullptr && *env != '\0') {
    return kernels_for_isa(env);
  }
  for (const char* isa : {"avx512", "avx2"}) {
    if (isa_supported(isa)) return kernels_for_isa(isa);
  }
  return portable_kernels();
}

}  // namespace pagoda::cpu
