// A read-only memory map of a whole file. Model weights are used in place from the map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace pagoda {

class MappedFile {
 public:
  // Throws pagoda::Error naming the path when the file cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  [[nodiscard]] const uint8_t* data() const { return data_; }
  [[nodiscard]] size_t size() const { return size_; }
  [[nodiscard]] std::span<const uint8_t> bytes() const { return {data_, size_}; }
  [[nodiscard]] const std::string& path() const { return path_; }

  // Whether [begin, begin + nbytes) lies inside this map.
  [[nodiscard]] bool contains(const void* begin, size_t nbytes) const;
  // Drops this process's resident pages that hold [begin, begin + nbytes), which must lie
  // inside the map: the bytes stay readable (the next touch reads them back from the file)
  // but no longer count in the process's RSS. For weights a backend has copied to its own
  // memory, so that a GPU run does not keep the whole checkpoint resident on the host.
  void release_pages(const void* begin, size_t nbytes) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pagoda
