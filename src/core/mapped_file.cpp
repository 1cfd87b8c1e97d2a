#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace pagoda {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("cannot map ", path, ": not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail("cannot map ", path, ": ", std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

bool MappedFile::contains(const void* begin, size_t nbytes) const {
  const auto p = reinterpret_cast<uintptr_t>(begin), base = reinterpret_cast<uintptr_t>(data_);
  return data_ != nullptr && p >= base && p - base <= size_ && nbytes <= size_ - (p - base);
}

void MappedFile::release_pages(const void* begin, size_t nbytes) const {
  PAGODA_CHECK(contains(begin, nbytes));
  if (nbytes == 0) return;
  // Whole pages, rounded outward: a neighbour that shares an edge page is read back from
  // the file when next touched, so nothing is lost. (On anonymous memory MADV_DONTNEED
  // would zero the pages instead, which is why the range must be in this file's map.)
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(begin) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(begin) + nbytes;
  // Advice only: a failure leaves the pages resident, which is not an error.
  (void)::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace pagoda
