// platform::map_file, the door the lab maps its traces, mirrors and memfd
// memory through: each access mode does what its name says to the file.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "strata/platform.hpp"

namespace {

using strata::platform::FileAccess;
using strata::platform::map_file;
using strata::platform::unmap_pages;

// A temporary file holding `text`, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const char* text) {
    fd_ = ::mkstemp(path_);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::write(fd_, text, std::strlen(text)), static_cast<ssize_t>(std::strlen(text)));
  }
  ~TempFile() {
    ::close(fd_);
    ::unlink(path_);
  }
  int fd() const { return fd_; }
  std::string contents(std::size_t n) const {
    std::string s(n, '\0');
    EXPECT_EQ(::pread(fd_, s.data(), n, 0), static_cast<ssize_t>(n));
    return s;
  }

 private:
  char path_[32] = "/tmp/strata-map-file-XXXXXX";
  int fd_ = -1;
};

TEST(PlatformMapFile, ReadOnlyShowsTheFile) {
  TempFile file("hello, pages");
  auto* p = static_cast<const char*>(map_file(file.fd(), 12, FileAccess::read_only));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::string(p, 12), "hello, pages");
  unmap_pages(const_cast<char*>(p), 12);
}

TEST(PlatformMapFile, PrivateCopyIsWritableAndLeavesTheFileAlone) {
  TempFile file("original");
  auto* p = static_cast<char*>(map_file(file.fd(), 8, FileAccess::private_copy));
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "modified", 8);
  EXPECT_EQ(std::string(p, 8), "modified");
  unmap_pages(p, 8);
  EXPECT_EQ(file.contents(8), "original");
}

TEST(PlatformMapFile, SharedWritesReachTheFile) {
  TempFile file("original");
  auto* p = static_cast<char*>(map_file(file.fd(), 8, FileAccess::shared));
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "modified", 8);
  unmap_pages(p, 8);
  EXPECT_EQ(file.contents(8), "modified");
}

TEST(PlatformMapFile, ABadDescriptorGivesNullAndTheKernelsErrno) {
  errno = 0;
  EXPECT_EQ(map_file(-1, 4096, FileAccess::read_only), nullptr);
  EXPECT_EQ(errno, EBADF);
}

}  // namespace
