// libstrata's settings, read once from the environment at start-up:
//
//   STRATA_SHOW_STATS=1  statistics on stderr at exit (stats.cpp)
//   STRATA_VERBOSE=1     the configuration on stderr at start-up
//   STRATA_CHECK=1       checked mode (checked.hpp)
//   STRATA_PURGE_DELAY_MS=N  how long freed pages wait before they go back
//                        to the OS (config.hpp, kPurgeDelayMs); a value that is
//                        not a number of milliseconds stops the program
//
// Any other STRATA_* variable gets a warning, except those the rest of strata
// reads (STRATA_LAB_*, STRATA_REAP_*, STRATA_BENCH_*, STRATA_TEST_*).
#pragma once
#include <atomic>
#include <cstdint>

#include "config.hpp"

namespace strata::malloc_detail {

// STRATA_PURGE_DELAY_MS, or the default until the options are read.
extern std::atomic<std::uint32_t> g_purge_delay_ms;
inline std::uint32_t purge_delay_ms() noexcept { return g_purge_delay_ms.load(std::memory_order_relaxed); }

struct Options {
  bool show_stats = false;
  bool verbose = false;
};

// Reads the environment (warning about values other than 0 and 1, and about
// unknown names) and switches checked mode on when asked.
Options read_options() noexcept;

// STRATA_VERBOSE: the build's sizes and limits, and the options in force.
void print_config(const Options& options) noexcept;

}  // namespace strata::malloc_detail
