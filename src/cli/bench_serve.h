// `pagoda bench serve`, the online serving benchmark (bench_serve.cpp); cmd_bench
// dispatches to it.
#pragma once

namespace pagoda::cli {

int bench_serve(int argc, char** argv);

}  // namespace pagoda::cli
