// GgufFile: valid files written by the test writer parse to what was written, and every
// kind of corruption is refused with a pagoda::Error naming the problem.
#include "loader/gguf.h"

#include <gtest/gtest.h>

#include <limits>

#include "loader/gguf_writer.h"

namespace pagoda {
namespace {

using test::Bytes;
using test::GgufWriter;
using test::TensorSpec;

std::unique_ptr<GgufFile> parse(const std::vector<uint8_t>& bytes) {
  return GgufFile::parse(std::span<const uint8_t>(bytes.data(), bytes.size()));
}

// Parsing must throw a pagoda::Error whose message contains `needle`.
void expect_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  try {
    (void)parse(bytes);
    ADD_FAILURE() << "parsed, expected an error containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
  }
}

// A small file using every value type, a nested array and tensors of three types.
GgufWriter sample_writer() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add("u8", test::kU8, uint8_t{200});
  w.add("i8", test::kI8, int8_t{-100});
  w.add("u16", test::kU16, uint16_t{60000});
  w.add("i16", test::kI16, int16_t{-30000});
  w.add_u32("u32", 4000000000u);
  w.add_i32("i32", -2000000000);
  w.add_f32("f32", 0.5f);
  w.add_bool("bool", true);
  w.add("u64", test::kU64, uint64_t{1} << 63);
  w.add("i64", test::kI64, int64_t{-(int64_t{1} << 62)});
  w.add("f64", test::kF64, 1e300);
  w.add_string_array("strings", {"a", "", "ccc"});
  w.add_array<int32_t>("ints", test::kI32, {1, -2, 3});
  w.add_array<float>("floats", test::kF32, {1.5f, -2.5f});
  Bytes nested;  // [[1, 2], [3]] as arrays of uint16
  nested.put<uint32_t>(test::kArray).put<uint64_t>(2);
  nested.put<uint32_t>(test::kU16).put<uint64_t>(2).put<uint16_t>(1).put<uint16_t>(2);
  nested.put<uint32_t>(test::kU16).put<uint64_t>(1).put<uint16_t>(3);
  w.add_raw("nested", test::kArray, nested);
  w.add_f32_tensor("a", {3, 2});
  TensorSpec q{"q", {32, 2}, test::kGgmlQ8_0, std::vector<uint8_t>(68, 7), std::nullopt};
  w.add_tensor(q);
  w.add_f32_tensor("b", {5});
  return w;
}

TEST(GgufParse, ReadsEveryValueTypeAndTensor) {
  const std::vector<uint8_t> bytes = sample_writer().bytes();
  const auto f = parse(bytes);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->metadata().size(), 16u);
  EXPECT_EQ(f->metadata()[0].first, "general.architecture");
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_int("u8"), 200);
  EXPECT_EQ(f->get_int("i8"), -100);
  EXPECT_EQ(f->get_int("u16"), 60000);
  EXPECT_EQ(f->get_int("i16"), -30000);
  EXPECT_EQ(f->get_int("u32"), 4000000000);
  EXPECT_EQ(f->get_int("i32"), -2000000000);
  EXPECT_EQ(f->get_float("f32"), 0.5);
  EXPECT_TRUE(f->get_bool("bool"));
  EXPECT_EQ(std::get<uint64_t>(f->find("u64")->value), uint64_t{1} << 63);
  EXPECT_EQ(f->get_int("i64"), -(int64_t{1} << 62));
  EXPECT_EQ(f->get_float("f64"), 1e300);
  EXPECT_EQ(f->get_string_array("strings"), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(f->get_int_array("ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(f->get_float_array("floats"), (std::vector<double>{1.5, -2.5}));
  EXPECT_EQ(f->get_float_array("ints"), (std::vector<double>{1, -2, 3}));

  const GgufValue* nested = f->find("nested");
  ASSERT_NE(nested, nullptr);
  const auto& outer = *std::get<std::shared_ptr<GgufArray>>(nested->value);
  ASSERT_EQ(outer.element_type, GgufType::Array);
  ASSERT_EQ(outer.values.size(), 2u);
  const auto& first = *std::get<std::shared_ptr<GgufArray>>(outer.values[0].value);
  EXPECT_EQ(first.element_type, GgufType::Uint16);
  EXPECT_EQ(std::get<uint64_t>(first.values[1].value), 2u);

  ASSERT_EQ(f->tensors().size(), 3u);
  const GgufTensorInfo* a = f->find_tensor("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (Shape{2, 3}));  // ne = {3, 2} reversed
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->nbytes, 24u);
  EXPECT_EQ(a->offset % 32, 0u);
  EXPECT_EQ(a->offset, f->data_offset());
  const Tensor ta = f->tensor(*a);
  EXPECT_EQ(ta.data<float>()[4], 4.0f);  // row 1, column 1 of the 0, 1, 2, ... fill
  const GgufTensorInfo* q = f->find_tensor("q");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, DType::Q8_0);
  EXPECT_EQ(q->shape, (Shape{2, 32}));
  EXPECT_EQ(q->nbytes, 68u);
  EXPECT_EQ(q->offset, f->data_offset() + 32);  // "a" (24 bytes) padded to 32
  EXPECT_EQ(f->find_tensor("b")->shape, (Shape{5}));
  EXPECT_EQ(f->find_tensor("missing"), nullptr);
}

TEST(GgufParse, AcceptsVersion2) {
  GgufWriter w = sample_writer();
  w.version = 2;
  EXPECT_EQ(parse(w.bytes())->version(), 2u);
}

TEST(GgufParse, EmptyFileWithNoTensors) {
  GgufWriter w;
  const auto f = parse(w.bytes());
  EXPECT_TRUE(f->metadata().empty());
  EXPECT_TRUE(f->tensors().empty());
}

TEST(GgufGetters, RefuseMissingKeysAndWrongTypes) {
  const std::vector<uint8_t> bytes = sample_writer().bytes();
  const auto f = parse(bytes);
  EXPECT_THROW((void)f->get_int("nope"), Error);
  EXPECT_THROW((void)f->get_int("f32"), Error);           // float is not an integer
  EXPECT_THROW((void)f->get_int("u64"), Error);           // 2^63 does not fit int64
  EXPECT_THROW((void)f->get_string("u32"), Error);
  EXPECT_THROW((void)f->get_bool("u8"), Error);
  EXPECT_THROW((void)f->get_float("strings"), Error);
  EXPECT_THROW((void)f->get_string_array("ints"), Error);
  EXPECT_THROW((void)f->get_int_array("floats"), Error);
  EXPECT_THROW((void)f->get_int_array("u32"), Error);     // not an array
  EXPECT_EQ(f->get_float("u32"), 4000000000.0);
  EXPECT_EQ(f->get_int_or("nope", 7), 7);
  EXPECT_EQ(f->get_int_or("u8", 7), 200);
  EXPECT_EQ(f->get_string_or("nope", "x"), "x");
  EXPECT_EQ(f->get_float_or("nope", 2.5), 2.5);
  EXPECT_TRUE(f->get_bool_or("nope", true));
  EXPECT_THROW((void)f->get_int_or("strings", 7), Error);  // present with a wrong type
  try {
    (void)f->get_string("u32");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("u32"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("uint32"), std::string::npos) << e.what();
  }
}

TEST(GgufCorrupt, BadMagic) {
  std::vector<uint8_t> bytes = sample_writer().bytes();
  bytes[0] = 'X';
  expect_error(bytes, "bad magic");
  expect_error({}, "truncated");
}

TEST(GgufCorrupt, BadVersions) {
  for (uint32_t v : {0u, 4u, 0x7fffffffu, 0xffffffffu}) {
    GgufWriter w = sample_writer();
    w.version = v;
    expect_error(w.bytes(), "unsupported GGUF version " + std::to_string(v));
  }
  GgufWriter w = sample_writer();
  w.version = 1;
  expect_error(w.bytes(), "version 1 is not supported");
  w.version = 0x03000000;  // version 3 written big-endian
  expect_error(w.bytes(), "big-endian");
}

TEST(GgufCorrupt, EveryTruncationIsAnError) {
  const std::vector<uint8_t> bytes = sample_writer().bytes();
  ASSERT_NO_THROW((void)parse(bytes));
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_THROW((void)parse(prefix), Error) << "prefix of " << n << " bytes";
  }
}

TEST(GgufCorrupt, HugeStringLength) {
  GgufWriter w;
  Bytes b;
  b.put<uint64_t>(std::numeric_limits<uint64_t>::max());  // string length
  w.add_raw("s", test::kString, b);
  expect_error(w.bytes(), "exceeds");
  // A key whose length is huge.
  Bytes raw;
  raw.put<uint32_t>(0x46554747).put<uint32_t>(3).put<uint64_t>(0).put<uint64_t>(1);
  raw.put<uint64_t>(uint64_t{1} << 62).put<uint32_t>(test::kU8).put<uint8_t>(0);
  expect_error(raw.data, "metadata key");
}

TEST(GgufCorrupt, HugeArrayCount) {
  GgufWriter w;
  Bytes b;
  b.put<uint32_t>(test::kU8).put<uint64_t>(uint64_t{1} << 60);
  w.add_raw("arr", test::kArray, b);
  expect_error(w.bytes(), "arr: array of 1152921504606846976 values is longer than the limit");
  GgufWriter fits_limit;  // under the length limit, but more than the bytes left
  Bytes c;
  c.put<uint32_t>(test::kU32).put<uint64_t>(1000);
  fits_limit.add_raw("arr", test::kArray, c);
  expect_error(fits_limit.bytes(), "arr: array of 1000 uint32 values exceeds the");
}

TEST(GgufCorrupt, HugeCounts) {
  GgufWriter w = sample_writer();
  w.kv_count_override = uint64_t{1} << 61;
  expect_error(w.bytes(), "metadata count");
  w = sample_writer();
  w.tensor_count_override = std::numeric_limits<uint64_t>::max();
  expect_error(w.bytes(), "tensor count");
  w = sample_writer();
  w.kv_count_override = 100;  // plausible but wrong: runs into the tensor infos
  EXPECT_THROW((void)parse(w.bytes()), Error);
}

TEST(GgufCorrupt, DimensionCounts) {
  GgufWriter w;
  w.add_tensor({"t5", {1, 1, 1, 1, 1}, test::kGgmlF32, std::vector<uint8_t>(4), std::nullopt});
  expect_error(w.bytes(), "tensor t5: 5 dimensions");
  GgufWriter w0;
  w0.add_tensor({"t0", {}, test::kGgmlF32, std::vector<uint8_t>(4), std::nullopt});
  expect_error(w0.bytes(), "tensor t0: 0 dimensions");
}

TEST(GgufCorrupt, ElementCountOverflow) {
  GgufWriter w;
  w.add_tensor({"big", {uint64_t{1} << 32, uint64_t{1} << 32}, test::kGgmlF32, {}, std::nullopt});
  expect_error(w.bytes(), "tensor big: element count overflows");
  GgufWriter neg;
  neg.add_tensor({"neg", {~uint64_t{0}}, test::kGgmlF32, {}, std::nullopt});
  expect_error(neg.bytes(), "tensor neg: element count overflows");
  GgufWriter bytes_overflow;  // fits int64 elements, but not as bytes
  bytes_overflow.add_tensor({"wide", {uint64_t{1} << 62}, test::kGgmlF32, {}, std::nullopt});
  expect_error(bytes_overflow.bytes(), "tensor wide: byte size overflows");
}

TEST(GgufCorrupt, RowNotMultipleOfBlock) {
  GgufWriter w;
  w.add_tensor({"q", {33, 1}, test::kGgmlQ8_0, std::vector<uint8_t>(34), std::nullopt});
  expect_error(w.bytes(), "tensor q: row length 33 is not a multiple of the Q8_0 block size 32");
}

TEST(GgufCorrupt, UnknownTensorType) {
  GgufWriter w;
  w.add_tensor({"odd", {4}, 99, std::vector<uint8_t>(16), std::nullopt});
  expect_error(w.bytes(), "tensor odd: unknown or unsupported ggml type 99");
}

TEST(GgufCorrupt, OffsetsAndExtents) {
  auto with_offset = [](uint64_t offset, uint64_t n = 4) {
    GgufWriter w;
    w.add_tensor({"t", {n}, test::kGgmlF32, std::vector<uint8_t>(4 * n), offset});
    return w.bytes();
  };
  ASSERT_NO_THROW((void)parse(with_offset(0)));
  expect_error(with_offset(1 << 20), "tensor t: data offset 1048576 is past the end");
  GgufWriter extent;  // data claims 64 bytes, file holds 16
  extent.add_tensor({"t", {16}, test::kGgmlF32, std::vector<uint8_t>(16), std::nullopt});
  expect_error(extent.bytes(), "tensor t: data (64 bytes at offset 0) extends past the end");
  expect_error(with_offset(std::numeric_limits<uint64_t>::max() - 31), "past the end");
  expect_error(with_offset(1), "tensor t: offset 1 is not a multiple of the alignment 32");
}

TEST(GgufCorrupt, BadAlignment) {
  for (uint32_t a : {0u, 3u, 48u, 1u << 30}) {
    GgufWriter w;
    w.add_u32("general.alignment", a);
    expect_error(w.bytes(), "general.alignment " + std::to_string(a) + " is not a power of two");
  }
  GgufWriter s;
  s.add_string("general.alignment", "32");
  expect_error(s.bytes(), "general.alignment holds string");
  GgufWriter ok = sample_writer();
  ok.alignment = 64;
  ok.add_u32("general.alignment", 64);
  const std::vector<uint8_t> bytes = ok.bytes();
  const auto f = parse(bytes);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  EXPECT_EQ(f->find_tensor("q")->offset, f->data_offset() + 64);
}

TEST(GgufCorrupt, DuplicateKeyAndTensor) {
  GgufWriter w;
  w.add_u32("k", 1);
  w.add_f32("k", 2);
  expect_error(w.bytes(), "duplicate metadata key k");
  GgufWriter t;
  t.add_f32_tensor("dup", {4});
  t.add_f32_tensor("dup", {4});
  expect_error(t.bytes(), "duplicate tensor name dup");
}

TEST(GgufCorrupt, UnknownValueTypes) {
  GgufWriter w;
  w.add("k", 13, uint8_t{0});
  expect_error(w.bytes(), "key k: unknown value type 13");
  GgufWriter a;
  Bytes b;
  b.put<uint32_t>(77).put<uint64_t>(0);
  a.add_raw("arr", test::kArray, b);
  expect_error(a.bytes(), "key arr: unknown array element type 77");
  GgufWriter bad_bool;
  bad_bool.add("flag", test::kBool, uint8_t{2});
  expect_error(bad_bool.bytes(), "key flag: bool value 2");
}

// An array nested `depth` levels deep around a single uint8.
Bytes nested_array(int depth) {
  Bytes b;
  for (int i = 1; i < depth; ++i) b.put<uint32_t>(test::kArray).put<uint64_t>(1);
  b.put<uint32_t>(test::kU8).put<uint64_t>(1).put<uint8_t>(9);
  return b;
}

TEST(GgufCorrupt, NestingDepthIsBounded) {
  GgufWriter ok;
  ok.add_raw("deep", test::kArray, nested_array(kGgufMaxArrayDepth));
  EXPECT_NO_THROW((void)parse(ok.bytes()));
  GgufWriter deep;
  deep.add_raw("deep", test::kArray, nested_array(kGgufMaxArrayDepth + 1));
  expect_error(deep.bytes(), "key deep: arrays nested deeper than");
  GgufWriter very_deep;  // would overflow the stack if the depth were unbounded
  very_deep.add_raw("deep", test::kArray, nested_array(100000));
  expect_error(very_deep.bytes(), "nested deeper");
}

TEST(GgufOpen, NamesThePath) {
  try {
    (void)GgufFile::open("/nonexistent/model.gguf");
    ADD_FAILURE() << "opened a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.gguf"), std::string::npos);
  }
}

}  // namespace
}  // namespace pagoda
