#include "arena_lock.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace strata::malloc_detail {

namespace {

// Spins before sleeping: a large malloc's critical section is a few hundred
// instructions, far below a futex round trip.
constexpr int kSpins = 100;

void futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value) noexcept {
  int saved = errno;  // malloc and free leave errno alone
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op | FUTEX_PRIVATE_FLAG, value, nullptr, nullptr, 0);
  errno = saved;
}

}  // namespace

void ArenaLock::lock_contended() noexcept {
  for (int spin = 0; spin < kSpins; ++spin) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (state_.load(std::memory_order_relaxed) == kFree && try_lock()) return;
  }
  // Mark the lock as slept on, and sleep while it is held; whoever wakes takes
  // it as kSleepers (others may still sleep: its unlock wakes the next).
  while (state_.exchange(kSleepers, std::memory_order_acquire) != kFree) futex(state_, FUTEX_WAIT, kSleepers);
}

void ArenaLock::wake_one() noexcept { futex(state_, FUTEX_WAKE, 1); }

}  // namespace strata::malloc_detail
