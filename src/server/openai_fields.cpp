#include "server/openai_fields.h"

#include <cmath>
#include <limits>

#include "server/openai_errors.h"

namespace pagoda::server {
namespace {

const char* type_name(const nlohmann::json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

[[noreturn]] void wrong_type(const std::string& param, const char* expected, const nlohmann::json& v) {
  bad_request(param + " must be " + expected + ", got " + type_name(v), param);
}

}  // namespace

int64_t integer_value(const nlohmann::json& value, const std::string& param) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_unsigned()) {
    // Beyond int64: an absurd number, not a different type.
    bad_request(param + " is too large", param);
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::trunc(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
    if (std::trunc(d) == d) bad_request(param + " is too large", param);
    bad_request(param + " must be an integer, got " + value.dump(), param);
  }
  wrong_type(param, "an integer", value);
}

int32_t token_id_value(const nlohmann::json& value, const std::string& param) {
  const int64_t id = integer_value(value, param);
  if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
    bad_request(param + " contains out-of-vocab token id " + std::to_string(id), param);
  }
  return static_cast<int32_t>(id);
}

std::vector<int32_t> token_id_list(const nlohmann::json& value, const std::string& param, size_t max_items) {
  if (!value.is_array()) wrong_type(param, "a list of token ids", value);
  if (value.size() > max_items) {
    bad_request(param + " must have at most " + std::to_string(max_items) + " entries", param);
  }
  std::vector<int32_t> ids;
  ids.reserve(value.size());
  for (const auto& v : value) ids.push_back(token_id_value(v, param));
  return ids;
}

const nlohmann::json* FieldReader::get(const char* name) const {
  const auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<bool> FieldReader::boolean(const char* name) const {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(name, "a boolean", *v);
  return v->get<bool>();
}

std::optional<double> FieldReader::number(const char* name) const {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(name, "a number", *v);
  return v->get<double>();
}

std::optional<float> FieldReader::number_f(const char* name) const {
  const std::optional<double> d = number(name);
  if (!d) return std::nullopt;
  // A double beyond float's range becomes +-inf, which the range checks then refuse.
  return static_cast<float>(*d);
}

std::optional<int64_t> FieldReader::integer(const char* name) const {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  return integer_value(*v, name);
}

std::optional<int> FieldReader::integer32(const char* name) const {
  const std::optional<int64_t> v = integer(name);
  if (!v) return std::nullopt;
  if (*v > std::numeric_limits<int>::max()) bad_request(std::string(name) + " is too large, got " + std::to_string(*v), name);
  if (*v < std::numeric_limits<int>::min()) bad_request(std::string(name) + " is too small, got " + std::to_string(*v), name);
  return static_cast<int>(*v);
}

std::optional<std::string> FieldReader::string(const char* name) const {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(name, "a string", *v);
  return v->get<std::string>();
}

std::vector<std::string> FieldReader::strings(const char* name, size_t max_items) const {
  const nlohmann::json* v = get(name);
  if (!v) return {};
  if (v->is_string()) return {v->get<std::string>()};
  if (!v->is_array()) wrong_type(name, "a string or a list of strings", *v);
  if (v->size() > max_items) {
    bad_request(std::string(name) + " must contain at most " + std::to_string(max_items) + " strings, got " +
                    std::to_string(v->size()), name);
  }
  std::vector<std::string> out;
  for (const auto& s : *v) {
    if (!s.is_string()) wrong_type(name, "a string or a list of strings", s);
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::optional<std::vector<int32_t>> FieldReader::token_ids(const char* name, size_t max_items) const {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  return token_id_list(*v, name, max_items);
}

}  // namespace pagoda::server
