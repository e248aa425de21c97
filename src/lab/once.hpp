// Runs an initialiser exactly once; threads arriving while it runs wait for
// it. Like std::call_once, but with no C++ runtime and no allocation, so the
// shims can use it inside malloc.
#pragma once
#include <sched.h>

#include <atomic>

namespace strata::lab {

class Once {
 public:
  bool done() const noexcept { return state_.load(std::memory_order_acquire) == kDone; }

  template <class Init>
  void run(Init init) noexcept {
    if (done()) return;
    int expected = kNotStarted;
    if (state_.compare_exchange_strong(expected, kRunning, std::memory_order_acq_rel)) {
      init();
      state_.store(kDone, std::memory_order_release);
    } else {
      while (!done()) ::sched_yield();
    }
  }

 private:
  enum : int { kNotStarted, kRunning, kDone };
  std::atomic<int> state_{kNotStarted};
};

}  // namespace strata::lab
