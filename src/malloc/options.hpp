// libstrata's settings, read once from the environment at start-up:
//
//   STRATA_SHOW_STATS=1  statistics on stderr at exit (stats.cpp)
//   STRATA_VERBOSE=1     the configuration on stderr at start-up
//   STRATA_CHECK=1       checked mode (checked.hpp)
//
// Any other STRATA_* variable gets a warning, except those the rest of strata
// reads (STRATA_LAB_*, STRATA_REAP_*, STRATA_BENCH_*, STRATA_TEST_*).
#pragma once

namespace strata::malloc_detail {

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
