#include "arena_lock.hpp"

#include "strata/platform/futex.hpp"

namespace strata::malloc_detail {

namespace {

// Spins before sleeping: a large malloc's critical section is a few hundred
// instructions, far below a futex round trip.
constexpr int kSpins = 100;

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
  while (state_.exchange(kSleepers, std::memory_order_acquire) != kFree) platform::futex_wait(state_, kSleepers);
}

void ArenaLock::wake_one() noexcept { platform::futex_wake(state_, 1); }

}  // namespace strata::malloc_detail
