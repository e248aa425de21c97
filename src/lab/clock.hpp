// Monotonic nanoseconds, comparable across processes on the same machine, and
// the process's CPU time (user + system, every thread).
#pragma once
#include <time.h>

#include <cstdint>

namespace strata::lab {

inline std::uint64_t clock_ns(clockid_t clock) noexcept {
  timespec ts;
  ::clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline std::uint64_t monotonic_ns() noexcept { return clock_ns(CLOCK_MONOTONIC); }

// What the process has run on a CPU, not how long it waited for one: on a
// shared machine a program's wall time also measures the other programs.
inline std::uint64_t process_cpu_ns() noexcept { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

}  // namespace strata::lab
