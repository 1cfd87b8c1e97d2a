#include "cli/args.h"

#include <cerrno>
#include <cstdlib>

#include "core/error.h"

namespace pagoda::cli {

Args::Args(int argc, char** argv, const std::set<std::string>& value_options,
           const std::set<std::string>& flag_options) {
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flag_options.count(name) != 0 && !inline_value) {
      flags_.insert(name);
    } else if (value_options.count(name) != 0) {
      if (!inline_value) {
        if (i + 1 >= argc) fail("option --", name, " needs a value");
        value = argv[++i];
      }
      values_[name] = value;
    } else {
      fail("unknown option --", name);
    }
  }
}

bool Args::has(const std::string& name) const {
  return flags_.count(name) != 0 || values_.count(name) != 0;
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

long long Args::get_int(const std::string& name, long long fallback, long long min,
                        long long max) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (errno != 0 || end == it->second.c_str() || *end != '\0') fail("--", name, " must be an integer");
  if (v < min || v > max) fail("--", name, " must be between ", min, " and ", max);
  return v;
}

double Args::get_double(const std::string& name, double fallback, double min, double max) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0' || v != v) fail("--", name, " must be a number");
  if (v < min || v > max) fail("--", name, " must be between ", min, " and ", max);
  return v;
}

std::string default_model_path() {
  const char* cache = std::getenv("PAGODA_CACHE");
  std::string dir;
  if (cache != nullptr && *cache != '\0') {
    dir = cache;
  } else {
    const char* home = std::getenv("HOME");
    dir = std::string(home != nullptr ? home : ".") + "/.cache/pagoda";
  }
  return dir + "/SmolLM2-135M-Instruct.Q4_1.gguf";
}

}  // namespace pagoda::cli
