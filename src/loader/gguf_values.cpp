// Typed access to GGUF metadata values: conversions that lose nothing, and errors that
// name the key and what it held.
#include <limits>

#include "core/error.h"
#include "loader/gguf.h"

namespace pagoda {

namespace {

bool is_integer(GgufType t) {
  switch (t) {
    case GgufType::Uint8:
    case GgufType::Int8:
    case GgufType::Uint16:
    case GgufType::Int16:
    case GgufType::Uint32:
    case GgufType::Int32:
    case GgufType::Uint64:
    case GgufType::Int64: return true;
    default: return false;
  }
}

bool is_float(GgufType t) { return t == GgufType::Float32 || t == GgufType::Float64; }

[[noreturn]] void wrong_type(std::string_view key, const GgufValue& v, const char* wanted) {
  fail("metadata key ", key, " holds ", gguf_type_name(v.type), ", expected ", wanted);
}

int64_t to_int(std::string_view key, const GgufValue& v) {
  if (!is_integer(v.type)) wrong_type(key, v, "an integer");
  if (const auto* u = std::get_if<uint64_t>(&v.value)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail("metadata key ", key, ": value ", *u, " is out of range");
    }
    return static_cast<int64_t>(*u);
  }
  return std::get<int64_t>(v.value);
}

double to_float(std::string_view key, const GgufValue& v) {
  if (is_float(v.type)) return std::get<double>(v.value);
  if (is_integer(v.type)) {
    if (const auto* u = std::get_if<uint64_t>(&v.value)) return static_cast<double>(*u);
    return static_cast<double>(std::get<int64_t>(v.value));
  }
  wrong_type(key, v, "a number");
}

const std::string& to_string(std::string_view key, const GgufValue& v) {
  if (v.type != GgufType::String) wrong_type(key, v, "a string");
  return std::get<std::string>(v.value);
}

bool to_bool(std::string_view key, const GgufValue& v) {
  if (v.type != GgufType::Bool) wrong_type(key, v, "a bool");
  return std::get<bool>(v.value);
}

const GgufArray& to_array(std::string_view key, const GgufValue& v) {
  if (v.type != GgufType::Array) wrong_type(key, v, "an array");
  return *std::get<std::shared_ptr<GgufArray>>(v.value);
}

const GgufValue& require(const GgufFile& file, std::string_view key) {
  const GgufValue* v = file.find(key);
  if (v == nullptr) fail("metadata key ", key, " is missing");
  return *v;
}

template <class T, class Convert>
std::vector<T> convert_array(std::string_view key, const GgufValue& v, Convert convert) {
  const GgufArray& array = to_array(key, v);
  std::vector<T> out;
  out.reserve(array.values.size());
  for (const GgufValue& element : array.values) out.push_back(convert(key, element));
  return out;
}

}  // namespace

const char* gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::Uint8: return "uint8";
    case GgufType::Int8: return "int8";
    case GgufType::Uint16: return "uint16";
    case GgufType::Int16: return "int16";
    case GgufType::Uint32: return "uint32";
    case GgufType::Int32: return "int32";
    case GgufType::Float32: return "float32";
    case GgufType::Bool: return "bool";
    case GgufType::String: return "string";
    case GgufType::Array: return "array";
    case GgufType::Uint64: return "uint64";
    case GgufType::Int64: return "int64";
    case GgufType::Float64: return "float64";
  }
  return "unknown";
}

std::string GgufFile::get_string(std::string_view key) const {
  return to_string(key, require(*this, key));
}
int64_t GgufFile::get_int(std::string_view key) const { return to_int(key, require(*this, key)); }
double GgufFile::get_float(std::string_view key) const {
  return to_float(key, require(*this, key));
}
bool GgufFile::get_bool(std::string_view key) const { return to_bool(key, require(*this, key)); }

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
  return convert_array<std::string>(key, require(*this, key), to_string);
}
std::vector<int64_t> GgufFile::get_int_array(std::string_view key) const {
  return convert_array<int64_t>(key, require(*this, key), to_int);
}
std::vector<double> GgufFile::get_float_array(std::string_view key) const {
  return convert_array<double>(key, require(*this, key), to_float);
}

std::string GgufFile::get_string_or(std::string_view key, std::string fallback) const {
  const GgufValue* v = find(key);
  return v == nullptr ? fallback : to_string(key, *v);
}
int64_t GgufFile::get_int_or(std::string_view key, int64_t fallback) const {
  const GgufValue* v = find(key);
  return v == nullptr ? fallback : to_int(key, *v);
}
double GgufFile::get_float_or(std::string_view key, double fallback) const {
  const GgufValue* v = find(key);
  return v == nullptr ? fallback : to_float(key, *v);
}
bool GgufFile::get_bool_or(std::string_view key, bool fallback) const {
  const GgufValue* v = find(key);
  return v == nullptr ? fallback : to_bool(key, *v);
}

}  // namespace pagoda
