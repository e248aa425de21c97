// Reads the two things preconditioning needs from a profile JSON written by
// the profiler: peak_live_objects and size_histogram. A deliberately small
// scanner for that format (the CLI validates profiles fully before a run);
// it allocates nothing from malloc.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::lab {

struct SizeDistribution {
  std::uint64_t peak_live_objects = 0;
  std::size_t sizes = 0;                  // number of distinct sizes
  std::uint64_t* size = nullptr;          // ascending request sizes
  std::uint64_t* cumulative = nullptr;    // running count up to and including size[i]
  std::uint64_t total() const noexcept { return sizes == 0 ? 0 : cumulative[sizes - 1]; }
};

// nullptr on success, else a static description of what is wrong.
const char* read_size_distribution(const char* path, SizeDistribution* out) noexcept;

// A size drawn in proportion to its count; `random` is uniform over 64 bits.
std::uint64_t sample_size(const SizeDistribution& d, std::uint64_t random) noexcept;

}  // namespace strata::lab
