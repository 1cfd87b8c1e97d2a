// The CPU backend with an explicit instruction set, for tests and benchmarks that compare
// the kernel paths; make_cpu_backend (backend.h) picks the best one (or $PAGODA_CPU_ISA).
#pragma once

#include <memory>

#include "backend/backend.h"

namespace pagoda::cpu {

// isa: "avx512", "avx2" or "portable"; throws Error when this CPU cannot run it.
std::unique_ptr<Backend> make_cpu_backend_for_isa(int num_threads, const char* isa);

}  // namespace pagoda::cpu
