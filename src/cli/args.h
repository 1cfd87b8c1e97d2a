// Minimal command-line parsing for the subcommands: positional arguments plus
// `--name value` and `--flag` options. Unknown or malformed options are errors.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace pagoda::cli {

class Args {
 public:
  // value_options take a value; flag_options do not.
  Args(int argc, char** argv, const std::set<std::string>& value_options,
       const std::set<std::string>& flag_options = {});

  [[nodiscard]] const std::vector<std::string>& positional() const { return positional_; }
  [[nodiscard]] bool has(const std::string& name) const;
  [[nodiscard]] std::string get(const std::string& name, const std::string& fallback) const;
  [[nodiscard]] long long get_int(const std::string& name, long long fallback, long long min,
                                  long long max) const;
  [[nodiscard]] double get_double(const std::string& name, double fallback, double min,
                                  double max) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
};

// The default model (SmolLM2-135M-Instruct) in the model cache.
[[nodiscard]] std::string default_model_path();

}  // namespace pagoda::cli
