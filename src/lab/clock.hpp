// Monotonic nanoseconds, comparable across processes on the same machine, and
// the process's CPU time (user + system, every thread).
#pragma once
#include <time.h>

#include <cstdint>

namespace strata::lab {

inline std::uint64_t monotonic_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// What the process has run on a CPU, not how long it waited for one: on a
// shared machine a program's wall time also measures the other programs.
inline std::uint64_t process_cpu_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace strata::lab
