// Monotonic nanoseconds, comparable across processes on the same machine.
#pragma once
#include <time.h>

#include <cstdint>

namespace strata::lab {

inline std::uint64_t monotonic_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace strata::lab
