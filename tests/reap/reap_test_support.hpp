// Shared by the reap tests: which implementation is under test, and a small
// RAII holder for C reaps.
#pragma once
#include <cstddef>
#include <cstdint>

#include "strata/reap.h"

namespace strata::test {

#ifdef STRATA_TEST_EMULATOR
inline constexpr bool kEmulator = true;
#else
inline constexpr bool kEmulator = false;
#endif

// Freed bytes a real reap lets wait while its stream bumps on (src/reap/reap_heap.hpp's
// kReapWaitBytes; test_internals pins the value).
inline constexpr std::size_t kReapWaitBytes = 8 * 1024;

inline bool aligned(const void* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

inline strata_reap_stats stats_of(const strata_reap* reap) {
  strata_reap_stats s;
  strata_reap_get_stats(reap, &s);
  return s;
}

// A root reap destroyed at scope exit.
struct ScopedReap {
  strata_reap* reap = strata_reap_create(nullptr);
  ScopedReap() = default;
  ScopedReap(const ScopedReap&) = delete;
  ScopedReap& operator=(const ScopedReap&) = delete;
  ~ScopedReap() { strata_reap_destroy(reap); }
  operator strata_reap*() const { return reap; }
};

}  // namespace strata::test
