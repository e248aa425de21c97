// A small lock for the shims: spins briefly, then yields the CPU. Shim critical
// sections are short, but on a machine with fewer cores than threads a pure
// spin lock wastes whole time slices while the holder is descheduled.
// It allocates nothing and is trivially re-initialisable after fork.
#pragma once
#include <atomic>
#include <sched.h>

namespace strata::lab {

class YieldingLock {
 public:
  void lock() noexcept {
    for (;;) {
      for (int spin = 0; spin < 64; ++spin) {
        if (!locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire)) return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
      ::sched_yield();
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }
  // In a fork child only the forking thread exists: whatever it held is free.
  void reset_after_fork() noexcept { locked_.store(false, std::memory_order_relaxed); }

 private:
  std::atomic<bool> locked_{false};
};

// RAII holder (std::lock_guard would do, but keeps <mutex> out of the shims).
class Hold {
 public:
  explicit Hold(YieldingLock& lock) noexcept : lock_(lock) { lock_.lock(); }
  ~Hold() { lock_.unlock(); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  YieldingLock& lock_;
};

}  // namespace strata::lab
