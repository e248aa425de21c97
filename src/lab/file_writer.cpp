#include "file_writer.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace strata::lab {

FileWriter::FileWriter(const char* path) noexcept {
  if (std::strcmp(path, "-") == 0) {  // standard output, written in place
    fd_ = 1;
    ok_ = true;
    in_place_ = true;
    return;
  }
  // A device, pipe or socket (/dev/null, a FIFO) is written in place: renaming a
  // file over it would replace the device with a regular file. Opened without
  // blocking: a FIFO nobody reads fails (ENXIO) instead of hanging the program.
  if (struct stat st; ::stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    fd_ = ::open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ >= 0) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);  // then write as usual
    ok_ = fd_ >= 0;
    in_place_ = owns_fd_ = true;
    return;
  }
  owns_fd_ = true;
  const std::size_t len = std::strlen(path);
  if (len + 5 > sizeof path_) return;
  std::memcpy(path_, path, len + 1);
  std::memcpy(tmp_path_, path, len);
  std::memcpy(tmp_path_ + len, ".tmp", 5);
  fd_ = ::open(tmp_path_, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ok_ = fd_ >= 0;
}

FileWriter::~FileWriter() {
  if (fd_ >= 0 && owns_fd_) {
    ::close(fd_);
    if (!in_place_) ::unlink(tmp_path_);
  }
}

void FileWriter::flush() noexcept {
  std::size_t done = 0;
  while (ok_ && done < used_) {
    const ssize_t n = ::write(fd_, buffer_ + done, used_ - done);
    if (n <= 0) ok_ = false;
    else done += static_cast<std::size_t>(n);
  }
  used_ = 0;
}

FileWriter& FileWriter::bytes(const void* data, std::size_t size) noexcept {
  const auto* p = static_cast<const char*>(data);
  while (size > 0 && ok_) {
    if (used_ == sizeof buffer_) flush();
    std::size_t chunk = sizeof buffer_ - used_;
    if (chunk > size) chunk = size;
    std::memcpy(buffer_ + used_, p, chunk);
    used_ += chunk;
    p += chunk;
    size -= chunk;
  }
  return *this;
}

FileWriter& FileWriter::text(const char* s) noexcept { return bytes(s, std::strlen(s)); }

FileWriter& FileWriter::number(std::uint64_t value) noexcept {
  char digits[24];
  std::size_t n = 0;
  do {
    digits[sizeof digits - 1 - n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  return bytes(digits + sizeof digits - n, n);
}

FileWriter& FileWriter::number(std::int64_t value) noexcept {
  if (value < 0) {
    text("-");
    return number(static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(value));
  }
  return number(static_cast<std::uint64_t>(value));
}

FileWriter& FileWriter::fixed(double value, int decimals) noexcept {
  if (value < 0) {
    text("-");
    value = -value;
  }
  std::uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const auto scaled = static_cast<std::uint64_t>(value * static_cast<double>(scale) + 0.5);
  number(scaled / scale);
  if (decimals > 0) {
    text(".");
    char frac[20];
    std::uint64_t f = scaled % scale;
    for (int i = decimals - 1; i >= 0; --i, f /= 10) frac[i] = static_cast<char>('0' + f % 10);
    bytes(frac, static_cast<std::size_t>(decimals));
  }
  return *this;
}

void FileWriter::abandon() noexcept {
  if (fd_ >= 0 && owns_fd_) ::close(fd_);
  fd_ = -1;
  ok_ = false;
  used_ = 0;
}

bool FileWriter::commit() noexcept {
  flush();
  if (fd_ < 0) return false;
  if (in_place_) {
    const bool closed = !owns_fd_ || ::close(fd_) == 0;
    fd_ = -1;
    return ok_ && closed;
  }
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  if (!ok_ || !closed || ::rename(tmp_path_, path_) != 0) {
    ::unlink(tmp_path_);
    return false;
  }
  return true;
}

}  // namespace strata::lab
