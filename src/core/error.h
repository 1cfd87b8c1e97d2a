// Errors caused by input (user requests, model files) are thrown as pagoda::Error and
// turned into a clear message by the front end; they never abort the process.
// Internal invariants use assert/PAGODA_CHECK instead.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace pagoda {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Builds a message from any streamable parts: fail("gguf: tensor ", name, " out of range").
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  throw Error(out.str());
}

[[noreturn]] void check_failed(const char* expr, const char* file, int line);

}  // namespace pagoda

// An internal invariant: a bug if it fails, never an input error.
#define PAGODA_CHECK(expr) \
  ((expr) ? (void)0 : ::pagoda::check_failed(#expr, __FILE__, __LINE__))
