// Futexes: sleep on a 32-bit word until another thread wakes it (Linux).
// Both calls leave errno as it was: malloc and free must not change it.
#pragma once
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace strata::platform {

namespace detail {
inline void futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value) noexcept {
  int saved = errno;
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op | FUTEX_PRIVATE_FLAG, value, nullptr, nullptr,
                  0);
  errno = saved;
}
}  // namespace detail

// Sleeps while `word` holds `expected` (returns at once if it does not; may
// return spuriously: callers loop).
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
  detail::futex(word, FUTEX_WAIT, expected);
}

// Wakes up to `count` threads sleeping on `word`.
inline void futex_wake(std::atomic<std::uint32_t>& word, std::uint32_t count) noexcept {
  detail::futex(word, FUTEX_WAKE, count);
}

}  // namespace strata::platform
