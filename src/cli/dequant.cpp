// `pagoda dequant --type Q4_K --input RAW.bin --output OUT.f32`: dequantizes a file of
// raw blocks with the CPU backend's reference dequantizer and writes little-endian f32.
// It exists so that tests can compare our dequantization with Python's gguf package.
#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "backend/cpu/dequant.h"
#include "cli/commands.h"
#include "core/dtype.h"
#include "core/error.h"

namespace pagoda::cli {

namespace {

DType parse_type(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(DType::Q6_K); ++i) {
    const auto type = static_cast<DType>(i);
    if (type != DType::I32 && dtype_name(type) == name) return type;
  }
  fail("unknown --type ", name,
       " (expected F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K or Q6_K)");
}

}  // namespace

int cmd_dequant(int argc, char** argv) {
  static_assert(std::endian::native == std::endian::little, "output is written as host floats");
  std::string type_name, input, output;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::puts("usage: pagoda dequant --type TYPE --input RAW.bin --output OUT.f32");
      return 0;
    }
    if (i + 1 >= argc) fail("missing value after ", arg);
    if (arg == "--type") {
      type_name = argv[++i];
    } else if (arg == "--input") {
      input = argv[++i];
    } else if (arg == "--output") {
      output = argv[++i];
    } else {
      fail("unknown option ", arg);
    }
  }
  if (type_name.empty() || input.empty() || output.empty()) {
    fail("usage: pagoda dequant --type TYPE --input RAW.bin --output OUT.f32");
  }
  const DType type = parse_type(type_name);
  const DTypeInfo& info = dtype_info(type);

  std::ifstream in(input, std::ios::binary);
  if (!in) fail("cannot open ", input);
  const std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("cannot read ", input);
  if (raw.size() % static_cast<size_t>(info.block_bytes) != 0) {
    fail(input, ": ", raw.size(), " bytes is not a whole number of ", info.name, " blocks (",
         info.block_bytes, " bytes each)");
  }
  const size_t n = raw.size() / static_cast<size_t>(info.block_bytes) * static_cast<size_t>(info.block_size);
  std::vector<float> values(n);
  cpu::dequantize_row(type, raw.data(), values.data(), static_cast<int64_t>(n));

  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  if (!out) fail("cannot create ", output);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(n * sizeof(float)));
  if (!out) fail("cannot write ", output);
  return 0;
}

}  // namespace pagoda::cli
