#include "heap_meter.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace strata::lab {
namespace {

// One smaps line at a time: a mapping header decides whether the Rss/Swap
// lines after it count.
class SmapsSum {
 public:
  void line(const char* text, std::size_t length) noexcept {
    if (length == 0) return;
    if (is_header(text, length)) {
      counting_ = counts(text, length);
    } else if (counting_ && (starts_with(text, length, "Rss:") || starts_with(text, length, "Swap:"))) {
      held_ += kilobytes(text, length) * 1024;
    } else if (counting_ && starts_with(text, length, "LazyFree:")) {
      discarded_ += kilobytes(text, length) * 1024;
    }
  }
  // A line longer than the reader's buffer can only be a header with a long
  // file path: not a heap mapping.
  void overlong_line() noexcept { counting_ = false; }
  std::uint64_t total() const noexcept { return held_ > discarded_ ? held_ - discarded_ : 0; }

 private:
  static bool starts_with(const char* text, std::size_t length, const char* prefix) noexcept {
    const std::size_t n = std::strlen(prefix);
    return length >= n && std::memcmp(text, prefix, n) == 0;
  }
  // "start-end perms offset dev inode [path]": the first field has a '-' and
  // no ':' (field lines are "Name:   value kB").
  static bool is_header(const char* text, std::size_t length) noexcept {
    for (std::size_t i = 0; i < length && text[i] != ' '; ++i) {
      if (text[i] == ':') return false;
      if (text[i] == '-') return true;
    }
    return false;
  }
  // Fields 5 (inode) and 6 (path) of a header.
  static bool counts(const char* text, std::size_t length) noexcept {
    std::size_t i = 0;
    for (int field = 0; field < 4; ++field) {  // skip range, perms, offset, dev
      while (i < length && text[i] != ' ') ++i;
      while (i < length && text[i] == ' ') ++i;
    }
    const std::size_t inode_start = i;
    while (i < length && text[i] != ' ') ++i;
    if (i - inode_start != 1 || text[inode_start] != '0') return false;
    while (i < length && text[i] == ' ') ++i;
    const char* path = text + i;
    const std::size_t path_length = length - i;
    return path_length == 0 || (path_length == 6 && std::memcmp(path, "[heap]", 6) == 0) ||
           starts_with(path, path_length, "[anon:");
  }
  static std::uint64_t kilobytes(const char* text, std::size_t length) noexcept {
    std::uint64_t value = 0;
    std::size_t i = 0;
    while (i < length && (text[i] < '0' || text[i] > '9')) ++i;
    for (; i < length && text[i] >= '0' && text[i] <= '9'; ++i) value = value * 10 + std::uint64_t(text[i] - '0');
    return value;
  }

  bool counting_ = false;
  std::uint64_t held_ = 0;       // Rss + Swap
  std::uint64_t discarded_ = 0;  // LazyFree: part of Rss, but given back
};

}  // namespace

std::uint64_t heap_resident_bytes() noexcept {
  const int fd = ::open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  SmapsSum sum;
  char buffer[8192];  // on the stack: callers may be on several threads
  std::size_t kept = 0;     // bytes of an unfinished line at the start of buffer
  bool skipping = false;    // inside an over-long line: drop it up to its newline
  for (;;) {
    const ssize_t got = ::read(fd, buffer + kept, sizeof buffer - kept);
    if (got <= 0) break;
    const std::size_t end = kept + static_cast<std::size_t>(got);
    std::size_t start = 0;
    for (std::size_t i = 0; i < end; ++i) {
      if (buffer[i] != '\n') continue;
      if (!skipping) sum.line(buffer + start, i - start);
      skipping = false;
      start = i + 1;
    }
    kept = end - start;
    if (kept == sizeof buffer) {
      sum.overlong_line();
      skipping = true;
      kept = 0;
    }
    std::memmove(buffer, buffer + start, kept);
  }
  ::close(fd);
  return sum.total();
}

std::uint64_t anonymous_resident_bytes() noexcept {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[128];  // "size resident shared text lib data dt", in pages
  const ssize_t got = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (got <= 0) return 0;
  std::uint64_t fields[3] = {0, 0, 0};
  const char* c = buffer;
  const char* end = buffer + got;
  for (std::uint64_t& field : fields) {
    for (; c < end && *c >= '0' && *c <= '9'; ++c) field = field * 10 + std::uint64_t(*c - '0');
    for (; c < end && (*c < '0' || *c > '9'); ++c) {
    }
  }
  const std::uint64_t resident = fields[1], shared = fields[2];
  return resident > shared ? (resident - shared) * config::kPageBytes : 0;
}

std::uint64_t peak_resident_bytes() noexcept {
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[4096];  // the whole file is about 1.5 KiB
  std::size_t used = 0;
  for (ssize_t got; used < sizeof buffer - 1 && (got = ::read(fd, buffer + used, sizeof buffer - 1 - used)) > 0;)
    used += static_cast<std::size_t>(got);
  ::close(fd);
  buffer[used] = '\0';
  const char* field = std::strstr(buffer, "\nVmHWM:");
  if (field == nullptr) return 0;
  std::uint64_t kilobytes = 0;
  for (field += 7; *field == ' ' || *field == '\t'; ++field) {
  }
  for (; *field >= '0' && *field <= '9'; ++field) kilobytes = kilobytes * 10 + std::uint64_t(*field - '0');
  return kilobytes * 1024;
}

}  // namespace strata::lab
