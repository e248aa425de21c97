// Checked mode: misuse (double free, a pointer strata never returned) is
// reported with the address, then the process aborts (checked.cpp; the checks
// of small objects are in per_thread_heap.cpp, of large ones in large_heap.cpp).
#pragma once
#include <atomic>

#include "config.hpp"

namespace strata::malloc_detail {

// STRATA_CHECK=1 (options.cpp sets it). Hidden, like all of libstrata: a
// rip-relative load, not one through the GOT, in every file that asks.
extern std::atomic<bool> g_checked __attribute__((visibility("hidden")));

inline bool checked_mode() noexcept {
  return malloc_config::kAlwaysChecked || g_checked.load(std::memory_order_relaxed);
}

// "strata: <what> <address>" on stderr, then abort().
[[noreturn]] void report_misuse(const char* what, const void* p) noexcept;

// The checks every build makes (default libstrata, not only checked mode):
// which call met the bad pointer, for the message.
enum class Use { kFree, kRealloc, kUsableSize };
// "strata: double free of 0x...", "strata: realloc of freed 0x...", ...
[[noreturn]] void report_freed(Use use, const void* p) noexcept;
// "strata: invalid free of 0x...", "strata: invalid realloc of 0x...", ...
[[noreturn]] void report_invalid(Use use, const void* p) noexcept;

// Is p something strata handed out and has not taken back? Reports and aborts
// if not (free and realloc ask).
void check_pointer(void* p) noexcept;

}  // namespace strata::malloc_detail
