// The large arenas' lock: one word, taken and given with one atomic
// instruction each when no one waits (a pthread mutex costs far more a call:
// docs/benchmarks-choices.md, "The large arenas' lock"). Contended, it spins briefly (critical sections are
// short), then sleeps on a futex (the holder may be descheduled, or in a
// system call: purging, mapping a region). Drepper's "Futexes Are Tricky",
// mutex 2: 0 free, 1 held, 2 held and someone may be asleep; only the release
// of a 2 makes a system call. constinit, and nothing to destroy: a fork child
// releases what its parent's forking thread held with unlock().
#pragma once
#include <atomic>
#include <cstdint>

namespace strata::malloc_detail {

class ArenaLock {
 public:
  constexpr ArenaLock() noexcept = default;
  ArenaLock(const ArenaLock&) = delete;
  ArenaLock& operator=(const ArenaLock&) = delete;

  bool try_lock() noexcept {
    std::uint32_t expected = kFree;
    return state_.compare_exchange_strong(expected, kHeld, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void lock() noexcept {
    if (!try_lock()) lock_contended();
  }
  void unlock() noexcept {
    if (state_.exchange(kFree, std::memory_order_release) == kSleepers) wake_one();
  }
  bool held() const noexcept { return state_.load(std::memory_order_relaxed) != kFree; }

 private:
  static constexpr std::uint32_t kFree = 0;
  static constexpr std::uint32_t kHeld = 1;
  static constexpr std::uint32_t kSleepers = 2;

  void lock_contended() noexcept;
  void wake_one() noexcept;

  std::atomic<std::uint32_t> state_{kFree};
};

}  // namespace strata::malloc_detail
