// Messages to stderr that never allocate: the allocator cannot call printf
// (it may call malloc) while it reports on itself or on a bad free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <unistd.h>

namespace strata::malloc_detail {

class Report {
 public:
  explicit Report(int fd = 2) noexcept : fd_(fd) {}
  ~Report() { flush(); }
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  Report& str(const char* s) noexcept {
    while (*s) put(*s++);
    return *this;
  }
  Report& num(std::uint64_t v) noexcept {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    while (n) put(digits[--n]);
    return *this;
  }
  // A number right-aligned in a field of `width` characters.
  Report& num(std::uint64_t v, int width) noexcept {
    int len = 1;
    for (std::uint64_t t = v; t >= 10; t /= 10) ++len;
    while (len++ < width) put(' ');
    return num(v);
  }
  Report& hex(std::uintptr_t v) noexcept {
    str("0x");
    bool started = false;
    for (int shift = 60; shift >= 0; shift -= 4) {
      unsigned d = (v >> shift) & 0xF;
      if (d || started || shift == 0) {
        put("0123456789abcdef"[d]);
        started = true;
      }
    }
    return *this;
  }
  Report& ptr(const void* p) noexcept { return hex(reinterpret_cast<std::uintptr_t>(p)); }
  // Bytes in the most readable unit (KiB/MiB with one decimal).
  Report& bytes(std::uint64_t b) noexcept {
    if (b < 10 * 1024) return num(b).str(" B");
    const char* unit = " KiB";
    std::uint64_t scale = 1024;
    if (b >= 10ull * 1024 * 1024) {
      unit = " MiB";
      scale = 1024 * 1024;
    }
    num(b / scale).put('.').num((b % scale) * 10 / scale);
    return str(unit);
  }
  Report& put(char c) noexcept {
    if (len_ == sizeof buf_) flush();
    buf_[len_++] = c;
    return *this;
  }
  void flush() noexcept {
    std::size_t done = 0;
    while (done < len_) {
      ssize_t w = ::write(fd_, buf_ + done, len_ - done);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
    len_ = 0;
  }

 private:
  int fd_;
  std::size_t len_ = 0;
  char buf_[512];
};

}  // namespace strata::malloc_detail
