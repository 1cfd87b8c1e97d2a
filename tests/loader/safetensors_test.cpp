#include "loader/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/half.h"

namespace pagoda {
namespace {

namespace fs = std::filesystem;

// The format, written out by hand: u64 little-endian header length, header, data.
std::vector<uint8_t> file_bytes(const std::string& header, const std::vector<uint8_t>& data, uint64_t len) {
  std::vector<uint8_t> out(8 + header.size() + data.size());
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
  if (!header.empty()) std::memcpy(out.data() + 8, header.data(), header.size());
  if (!data.empty()) std::memcpy(out.data() + 8 + header.size(), data.data(), data.size());
  return out;
}
// Pads the header with spaces to a multiple of 8 bytes, as the reference writer does, so
// that the data is aligned.
std::vector<uint8_t> file_bytes(std::string header, const std::vector<uint8_t>& data) {
  header.resize((header.size() + 7) / 8 * 8, ' ');
  return file_bytes(header, data, header.size());
}

std::vector<uint8_t> floats(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Two tensors and metadata: "a" F32 [2, 3] at [0, 24), "b" BF16 [4] at [24, 32).
const char* const kHeader =
    R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
    R"("b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]}})";

std::vector<uint8_t> valid_data() {
  std::vector<uint8_t> data = floats({1, 2, 3, 4, 5, 6.5f});
  for (float f : {1.0f, -2.0f, 0.5f, 3.0f}) {
    const uint16_t h = f32_to_bf16(f);
    data.push_back(static_cast<uint8_t>(h));
    data.push_back(static_cast<uint8_t>(h >> 8));
  }
  return data;
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    (void)SafetensorsFile::parse(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A header with a single tensor entry `entry` and `data_size` bytes of data.
std::string error_of_entry(const std::string& entry, size_t data_size) {
  return error_of(file_bytes(R"({"t":)" + entry + "}", std::vector<uint8_t>(data_size)));
}

TEST(Safetensors, ParsesValidFile) {
  const std::vector<uint8_t> bytes = file_bytes(kHeader, valid_data());
  const auto file = SafetensorsFile::parse(bytes);
  ASSERT_EQ(file->tensors().size(), 2u);
  EXPECT_EQ(file->metadata().at("format"), "pt");
  const auto* a = file->find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->shape, (Shape{2, 3}));
  const Tensor ta = file->tensor(*a);
  EXPECT_EQ(ta.raw(), bytes.data() + 8 + (std::strlen(kHeader) + 7) / 8 * 8);  // a view, not a copy
  EXPECT_EQ(ta.data<float>()[5], 6.5f);
  const Tensor tb = file->tensor(*file->find("b"));
  EXPECT_EQ(tb.dtype(), DType::BF16);
  EXPECT_EQ(bf16_to_f32(tb.data<uint16_t>()[1]), -2.0f);
  EXPECT_EQ(file->find("c"), nullptr);
}

TEST(Safetensors, HeaderMayBePaddedWithSpaces) {
  const std::string header = std::string(kHeader) + "      ";
  EXPECT_EQ(SafetensorsFile::parse(file_bytes(header, valid_data()))->tensors().size(), 2u);
}

TEST(Safetensors, EmptyAndScalarTensors) {
  const std::string header =
      R"({"e":{"dtype":"F16","shape":[0,5],"data_offsets":[0,0]},"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  const std::vector<uint8_t> bytes = file_bytes(header, floats({7}));  // must outlive the views
  const auto file = SafetensorsFile::parse(bytes);
  EXPECT_EQ(file->find("e")->nbytes, 0u);
  EXPECT_EQ(file->tensor(*file->find("s")).data<float>()[0], 7.0f);
}

TEST(Safetensors, EveryTruncationIsAnError) {
  const std::vector<uint8_t> bytes = file_bytes(kHeader, valid_data());
  for (size_t n = 0; n < bytes.size(); ++n) {
    // A fresh allocation of exactly n bytes, so that ASan catches any read past it.
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
    prefix.shrink_to_fit();
    EXPECT_NE(error_of(prefix), "") << "prefix of " << n << " bytes";
  }
}

TEST(Safetensors, HeaderLength) {
  const std::vector<uint8_t> data = valid_data();
  EXPECT_NE(error_of(file_bytes(kHeader, data, ~0ull)).find("exceeds the limit"), std::string::npos);
  EXPECT_NE(error_of(file_bytes(kHeader, data, kSafetensorsMaxHeader + 1)).find("limit"), std::string::npos);
  // Within the limit but past the end of the file.
  EXPECT_NE(error_of(file_bytes(kHeader, data, 1000)).find("past the end"), std::string::npos);
  EXPECT_NE(error_of({1, 2, 3}).find("no header length"), std::string::npos);
  // Shorter than the JSON: the header is cut mid-object.
  EXPECT_NE(error_of(file_bytes(kHeader, data, 20)).find("invalid JSON"), std::string::npos);
}

TEST(Safetensors, BadJson) {
  for (const std::string header : {"{", "", "nul", R"({"a":)", "{\"a\xff\":1}"}) {
    EXPECT_NE(error_of(file_bytes(header, {})).find("invalid JSON"), std::string::npos) << header;
  }
  EXPECT_NE(error_of(file_bytes("[1,2]", {})).find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of(file_bytes(R"({"t":5})", {})).find("tensor t is not an object"), std::string::npos);
  EXPECT_NE(error_of(file_bytes(R"({"__metadata__":[1]})", {})).find("__metadata__"), std::string::npos);
  EXPECT_NE(error_of(file_bytes(R"({"__metadata__":{"k":1}})", {})).find("__metadata__"), std::string::npos);
}

TEST(Safetensors, MissingOrMistypedFields) {
  EXPECT_NE(error_of_entry(R"({"shape":[1],"data_offsets":[0,4]})", 4).find("no dtype"), std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":3,"shape":[1],"data_offsets":[0,4]})", 4).find("no dtype"), std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","data_offsets":[0,4]})", 4).find("no shape"), std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[1]})", 4).find("data_offsets"), std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[0]})", 4).find("data_offsets"),
            std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[0,"4"]})", 4).find("data_offsets"),
            std::string::npos);
}

TEST(Safetensors, UnsupportedDtypesNameTensorAndDtype) {
  for (const std::string dtype : {"I64", "F8_E4M3", "F64", "BOOL", "U8"}) {
    const std::string error =
        error_of_entry(R"({"dtype":")" + dtype + R"(","shape":[1],"data_offsets":[0,8]})", 8);
    EXPECT_NE(error.find("tensor t has dtype " + dtype), std::string::npos) << error;
    EXPECT_NE(error.find("not support"), std::string::npos) << error;
  }
  EXPECT_NE(error_of_entry(R"({"dtype":"Q4","shape":[1],"data_offsets":[0,1]})", 1).find("unknown dtype"),
            std::string::npos);
}

TEST(Safetensors, BadShapes) {
  // 2^32 * 2^32 overflows 64 bits; 2^62 * 4 bytes overflows the byte count.
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]})", 4)
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,4]})", 4)
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,4]})", 4)
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})", 4).find("non-negative"),
            std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,4]})", 4).find("non-negative"),
            std::string::npos);
}

TEST(Safetensors, BadOffsets) {
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})", 7).find("past the data"),
            std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})", 8).find("inverted"),
            std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0,12]})", 12).find("needs 8"),
            std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]})", 8)
                .find("past the data"),
            std::string::npos);
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0,-8]})", 8).find("non-negative"),
            std::string::npos);
}

TEST(Safetensors, DuplicateNamesAreRefused) {
  const std::string header = R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  EXPECT_NE(error_of(file_bytes(header, std::vector<uint8_t>(8))).find("duplicate key \"t\""), std::string::npos);
  // Inside an entry too: which dtype would be meant?
  EXPECT_NE(error_of_entry(R"({"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]})", 4)
                .find("duplicate key \"dtype\""),
            std::string::npos);
}

TEST(SafetensorsIndex, ParsesWeightMap) {
  const auto map = parse_safetensors_index(
      R"({"metadata":{"total_size":8},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"x.safetensors"}})");
  ASSERT_EQ(map.size(), 2u);
  EXPECT_EQ(map.at("a"), "model-00001-of-00002.safetensors");
}

TEST(SafetensorsIndex, RefusesShardPathsOutsideTheDirectory) {
  for (const std::string shard : {"../x.safetensors", "sub/x.safetensors", "/etc/passwd", "", "..", ".",
                                  "a\\\\b.safetensors"}) {
    try {
      (void)parse_safetensors_index(R"({"weight_map":{"w":")" + shard + R"("}})");
      ADD_FAILURE() << "accepted " << shard;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not a plain file name"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)parse_safetensors_index(R"({"weight_map":{"w":"a\u0000b"}})"), Error);
  EXPECT_THROW((void)parse_safetensors_index(R"({"weight_map":{"w":3}})"), Error);
  EXPECT_THROW((void)parse_safetensors_index(R"({"weight_map":[]})"), Error);
  EXPECT_THROW((void)parse_safetensors_index(R"({})"), Error);
  EXPECT_THROW((void)parse_safetensors_index(R"({"weight_map":{"w":"a","w":"b"}})"), Error);
  EXPECT_THROW((void)parse_safetensors_index("{"), Error);
}

class SafetensorsDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pagoda_st_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::ofstream(dir_ / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                       static_cast<std::streamsize>(bytes.size()));
  }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  fs::path dir_;
};

TEST_F(SafetensorsDir, OpensSingleFile) {
  write("model.safetensors", file_bytes(kHeader, valid_data()));
  const auto set = SafetensorsSet::open_dir(dir_.string());
  EXPECT_EQ(set->names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(set->tensor("a").data<float>()[1], 2.0f);
  EXPECT_THROW((void)set->tensor("zz"), Error);
}

TEST_F(SafetensorsDir, OpensShards) {
  write("s1.safetensors", file_bytes(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", floats({1, 2})));
  write("s2.safetensors", file_bytes(R"({"y":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", floats({3})));
  write("model.safetensors.index.json", R"({"weight_map":{"x":"s1.safetensors","y":"s2.safetensors"}})");
  const auto set = SafetensorsSet::open_dir(dir_.string());
  EXPECT_EQ(set->num_files(), 2u);
  EXPECT_EQ(set->tensor("x").data<float>()[1], 2.0f);
  EXPECT_EQ(set->tensor("y").data<float>()[0], 3.0f);
}

TEST_F(SafetensorsDir, ShardErrorsNameTheProblem) {
  write("s1.safetensors", file_bytes(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", floats({1, 2})));
  write("model.safetensors.index.json", R"({"weight_map":{"x":"s1.safetensors","y":"s1.safetensors"}})");
  try {
    (void)SafetensorsSet::open_dir(dir_.string());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor y in s1.safetensors"), std::string::npos) << e.what();
  }
  write("model.safetensors.index.json", R"({"weight_map":{"x":"missing.safetensors"}})");
  EXPECT_THROW((void)SafetensorsSet::open_dir(dir_.string()), Error);
  write("model.safetensors.index.json", R"({"weight_map":{"x":"../s1.safetensors"}})");
  EXPECT_THROW((void)SafetensorsSet::open_dir(dir_.string()), Error);
}

TEST_F(SafetensorsDir, CorruptFileErrorNamesPath) {
  write("model.safetensors", file_bytes(kHeader, {1, 2, 3}));
  try {
    (void)SafetensorsSet::open_dir(dir_.string());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors: safetensors: tensor a"), std::string::npos)
        << e.what();
  }
  fs::remove(dir_ / "model.safetensors");
  EXPECT_THROW((void)SafetensorsSet::open_dir(dir_.string()), Error);
}

// Two files written by the reference (safetensors via transformers' save_pretrained): the
// bf16 checkpoint is the fp32 one rounded to nearest even, which f32_to_bf16 does.
TEST(SafetensorsReference, Bf16FileIsRoundedF32File) {
  const std::string base = std::string(PAGODA_TEST_DATA) + "/hf/qwen2-";
  const auto f32 = SafetensorsFile::open(base + "fp32/model.safetensors");
  const auto b16 = SafetensorsFile::open(base + "bf16/model.safetensors");
  EXPECT_EQ(f32->metadata().at("format"), "pt");
  ASSERT_EQ(f32->tensors().size(), b16->tensors().size());
  size_t checked = 0;
  for (const SafetensorsTensorInfo& info : f32->tensors()) {
    const SafetensorsTensorInfo* other = b16->find(info.name);
    ASSERT_NE(other, nullptr) << info.name;
    ASSERT_EQ(info.dtype, DType::F32);
    ASSERT_EQ(other->dtype, DType::BF16);
    ASSERT_EQ(info.shape, other->shape);
    const Tensor a = f32->tensor(info);
    const Tensor b = b16->tensor(*other);
    for (int64_t i = 0; i < a.numel(); ++i) {
      float v;
      uint16_t h;
      std::memcpy(&v, static_cast<const uint8_t*>(a.raw()) + i * 4, 4);
      std::memcpy(&h, static_cast<const uint8_t*>(b.raw()) + i * 2, 2);
      ASSERT_EQ(f32_to_bf16(v), h) << info.name << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 100000u);
}

}  // namespace
}  // namespace pagoda
