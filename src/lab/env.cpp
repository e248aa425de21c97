#include "env.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace strata::lab {

bool parse_u64(const char* text, std::uint64_t* out) noexcept {
  if (text == nullptr || *text == '\0') return false;
  std::uint64_t value = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return false;
    if (__builtin_mul_overflow(value, 10u, &value) || __builtin_add_overflow(value, unsigned(*c - '0'), &value))
      return false;
  }
  *out = value;
  return true;
}

bool parse_fraction(const char* text, double* out) noexcept {
  if (text == nullptr || *text == '\0') return false;
  // Digits with at most one point, then strtod for a correctly rounded value.
  bool digits = false, point = false;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c >= '0' && *c <= '9')
      digits = true;
    else if (*c == '.' && !point)
      point = true;
    else
      return false;
  }
  if (!digits) return false;
  *out = std::strtod(text, nullptr);
  return true;
}

bool expand_path(const char* pattern, char* out, std::size_t capacity) noexcept {
  char pid[24];
  std::size_t pid_len = 0;
  for (unsigned long v = static_cast<unsigned long>(::getpid()); pid_len == 0 || v != 0; v /= 10)
    pid[pid_len++] = static_cast<char>('0' + v % 10);
  std::size_t used = 0;
  for (const char* c = pattern; *c != '\0'; ++c) {
    if (c[0] == '%' && c[1] == 'p') {
      for (std::size_t i = pid_len; i-- > 0;) {
        if (used + 1 >= capacity) return false;
        out[used++] = pid[i];
      }
      ++c;
    } else {
      if (used + 1 >= capacity) return false;
      out[used++] = *c;
    }
  }
  out[used] = '\0';
  return true;
}

void complain(const char* who, const char* a, const char* b) noexcept {
  const char* parts[] = {"strata-lab: ", who, ": ", a, b, "\n"};
  for (const char* part : parts) {
    ssize_t ignored = ::write(2, part, std::strlen(part));
    (void)ignored;
  }
}

}  // namespace strata::lab

namespace strata::lab {

void exit_now(int status) noexcept {
  for (;;) ::syscall(SYS_exit_group, status);
}

}  // namespace strata::lab
