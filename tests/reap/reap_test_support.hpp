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

// Freed objects come first once kReapWaitBytes of them wait. A freed large
// object of that size, which no small request takes, makes every later
// free's object come first at once (the window closes at each free), as the
// tests of the reuse policy expect.
inline void start_reusing(strata_reap* reap) {
  void* primer = strata_reap_malloc(reap, kReapWaitBytes);
  void* guard = strata_reap_malloc(reap, 8);  // so that the primer is not the stream's last object
  strata_reap_free(reap, primer);
  strata_reap_free(reap, guard);  // the last object: un-bumped, nothing left live
}

}  // namespace strata::test
