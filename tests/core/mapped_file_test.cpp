// MappedFile::release_pages and WeightMap::release_pages: what a backend that copies the
// weights to its device calls, so that the checkpoint does not stay resident on the host.
#include "core/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "loader/weights.h"

namespace pagoda {
namespace {

// The process's resident set in bytes, as the kernel counts it (/proc/self/statm).
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

// A temporary file of n bytes with a known pattern, removed at the end of the test.
class PatternFile {
 public:
  explicit PatternFile(size_t n)
      : path_(std::filesystem::temp_directory_path() / ("pagoda_mapped_" + std::to_string(::getpid()))) {
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + (i >> 12));
    std::ofstream(path_, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(n));
    checksum_ = std::accumulate(bytes.begin(), bytes.end(), uint64_t{0});
  }
  ~PatternFile() { std::filesystem::remove(path_); }
  [[nodiscard]] std::string path() const { return path_.string(); }
  [[nodiscard]] uint64_t checksum() const { return checksum_; }

 private:
  std::filesystem::path path_;
  uint64_t checksum_ = 0;
};

uint64_t sum_bytes(const uint8_t* p, size_t n) { return std::accumulate(p, p + n, uint64_t{0}); }

TEST(MappedFile, ReleasePagesDropsThemFromRssAndTheBytesReadBackFromTheFile) {
  constexpr size_t kBytes = size_t{64} << 20;
  const PatternFile file(kBytes);
  const MappedFile map(file.path());
  ASSERT_EQ(map.size(), kBytes);
  ASSERT_EQ(sum_bytes(map.data(), kBytes), file.checksum());  // every page touched
  const size_t touched = resident_bytes();

  map.release_pages(map.data(), kBytes);
  const size_t released = resident_bytes();
  EXPECT_LT(released + kBytes * 9 / 10, touched) << "touched " << touched << " B, after release " << released << " B";

  EXPECT_EQ(sum_bytes(map.data(), kBytes), file.checksum());  // read back from the file
}

TEST(MappedFile, ContainsOnlyRangesInsideTheMap) {
  const PatternFile file(10000);
  const MappedFile map(file.path());
  EXPECT_TRUE(map.contains(map.data(), 10000));
  EXPECT_TRUE(map.contains(map.data() + 9999, 1));
  EXPECT_TRUE(map.contains(map.data() + 10000, 0));
  EXPECT_FALSE(map.contains(map.data() + 9999, 2));
  EXPECT_FALSE(map.contains(map.data() - 1, 1));
  const std::vector<uint8_t> heap(16);
  EXPECT_FALSE(map.contains(heap.data(), heap.size()));
}

// Releasing must touch only tensors that view a mapped file: on heap memory the same
// madvise would zero the pages.
TEST(WeightMap, ReleasePagesKeepsMappedViewsReadableAndLeavesOtherMemoryAlone) {
  constexpr size_t kBytes = size_t{8} << 20;
  const PatternFile file(kBytes);
  const MappedFile map(file.path());
  WeightMap weights;
  weights.add_mapping(&map);
  const Tensor mapped = Tensor::view(DType::F32, {static_cast<int64_t>(kBytes / 4)}, map.data());
  Tensor heap = Tensor::host(DType::F32, {1 << 20});
  for (int64_t i = 0; i < heap.numel(); ++i) heap.data<float>()[i] = static_cast<float>(i);

  weights.release_pages(mapped);
  weights.release_pages(heap);

  EXPECT_EQ(sum_bytes(static_cast<const uint8_t*>(mapped.raw()), kBytes), file.checksum());
  for (int64_t i = 0; i < heap.numel(); ++i) ASSERT_EQ(heap.data<float>()[i], static_cast<float>(i)) << i;
}

}  // namespace
}  // namespace pagoda
