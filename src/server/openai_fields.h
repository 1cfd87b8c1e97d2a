// Typed access to the fields of a JSON request object, with pydantic's leniency as vLLM
// has it: null is the same as absent, an integral float is an integer. A present field of
// the wrong type or out of range is an ApiError (400) whose param names it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pagoda::server {

class FieldReader {
 public:
  explicit FieldReader(const nlohmann::json& object) : object_(object) {}

  // The field, or nullptr when absent or null.
  [[nodiscard]] const nlohmann::json* get(const char* name) const;
  [[nodiscard]] std::optional<bool> boolean(const char* name) const;
  [[nodiscard]] std::optional<double> number(const char* name) const;
  [[nodiscard]] std::optional<float> number_f(const char* name) const;
  [[nodiscard]] std::optional<int64_t> integer(const char* name) const;
  // An integer that must fit an int (so 1e12 for n is refused here, not wrapped).
  [[nodiscard]] std::optional<int> integer32(const char* name) const;
  [[nodiscard]] std::optional<std::string> string(const char* name) const;
  // A string or a list of strings (OpenAI's `stop`); at most max_items entries.
  [[nodiscard]] std::vector<std::string> strings(const char* name, size_t max_items) const;
  // A list of token ids (each in [0, 2^31)); at most max_items entries.
  [[nodiscard]] std::optional<std::vector<int32_t>> token_ids(const char* name, size_t max_items) const;

 private:
  const nlohmann::json& object_;
};

// The same checks on a bare value, for list elements; `param` names it in errors.
[[nodiscard]] int64_t integer_value(const nlohmann::json& value, const std::string& param);
[[nodiscard]] int32_t token_id_value(const nlohmann::json& value, const std::string& param);
[[nodiscard]] std::vector<int32_t> token_id_list(const nlohmann::json& value, const std::string& param, size_t max_items);

}  // namespace pagoda::server
