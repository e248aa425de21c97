// Threads: the kernel's id of the calling thread, and a spin lock.
#pragma once
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace strata::platform {

inline std::uint64_t thread_id() noexcept {
  static thread_local const std::uint64_t tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  return tid;
}

// A test-and-test-and-set spin lock: allocator critical sections are a few
// dozen instructions, too short for a futex round trip to pay. Satisfies
// BasicLockable, so std::lock_guard works.
class SpinLock {
 public:
  void lock() noexcept {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace strata::platform
