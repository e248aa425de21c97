// Checked mode: misuse (double free, a pointer strata never returned) is
// reported with the address, then the process aborts.
#pragma once
#include <atomic>

#include "config.hpp"

namespace strata::malloc_detail {

extern std::atomic<bool> g_checked;  // STRATA_CHECK=1

inline bool checked_mode() noexcept {
  return malloc_config::kAlwaysChecked || g_checked.load(std::memory_order_relaxed);
}

// "strata: <what> <address>" on stderr, then abort().
[[noreturn]] void report_misuse(const char* what, const void* p) noexcept;

}  // namespace strata::malloc_detail
