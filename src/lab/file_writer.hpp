// Buffered output to a file without malloc, for the shims' JSON and traces.
// Files are written as <path>.tmp and renamed on commit(), so a reader never
// sees half a file. The path "-" means standard output; a path that is not a
// regular file (/dev/null, a FIFO) is written in place, never replaced.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::lab {

class FileWriter {
 public:
  // Opens <path>.tmp; ok() tells whether it worked.
  explicit FileWriter(const char* path) noexcept;
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  bool ok() const noexcept { return ok_; }
  FileWriter& text(const char* s) noexcept;
  FileWriter& bytes(const void* data, std::size_t size) noexcept;
  FileWriter& number(std::uint64_t value) noexcept;
  FileWriter& number(std::int64_t value) noexcept;
  // Fixed point with `decimals` digits after the point (JSON has no NaN: value must be finite).
  FileWriter& fixed(double value, int decimals) noexcept;
  // Flushes, closes and renames into place. False (and the file removed) on any error.
  bool commit() noexcept;
  // Forgets the file without touching it (a fork child leaving its parent's file alone).
  void abandon() noexcept;

 private:
  void flush() noexcept;

  char path_[4096];
  char tmp_path_[4100];
  int fd_ = -1;
  bool ok_ = false;
  bool in_place_ = false;   // standard output or a device: no temporary file, no rename
  bool owns_fd_ = false;    // false for standard output
  std::size_t used_ = 0;
  char buffer_[8192];
};

}  // namespace strata::lab
