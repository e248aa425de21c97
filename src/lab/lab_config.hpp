// Tunables of the lab's preload shims, in one place.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::lab::config {

// Memory handed out while dlsym resolves the next allocator (dlsym itself calls
// calloc). glibc needs well under a kilobyte; the rest is headroom.
inline constexpr std::size_t kBootstrapArenaBytes = 64 * 1024;

// The live-object table is split into independently locked stripes so threads
// rarely contend; each stripe starts with this many slots and doubles at half load.
inline constexpr std::size_t kTableStripes = 64;
inline constexpr std::size_t kTableInitialSlots = 256;

// Size histogram: requests below the cutoff are counted per exact size
// (the 2026 paper's detection phase uses 4096); the cutoff is adjustable up to the maximum.
inline constexpr std::uint64_t kDefaultCutoff = 4096;
inline constexpr std::uint64_t kMaxCutoff = 1u << 24;

// The trace recorder buffers this many bytes before a write(2).
inline constexpr std::size_t kTraceBufferBytes = 1 << 20;

inline constexpr std::size_t kPageBytes = 4096;

// The profiler measures memory in use at new peaks of live bytes (while the
// fragmentation meter watches): first at this many live bytes, then each time
// live bytes pass the last sampled level by an eighth (at least this much).
inline constexpr std::uint64_t kHeapSampleFirstBytes = 64 * 1024;

// The profiler's memory mode (STRATA_LAB_MEMORY=1, the fragmentation meter's
// memory runs) samples more closely: at a new live peak once it passes the last
// sampled level by 1/kInUseStepDivisor (so the last sample is within 0.8% of
// the final peak), and whenever the process's anonymous resident memory passes
// its level at the last sample by the same fraction, which it checks every
// 1/kGrowthChecksPerPeak of the peak memory in use allocated (at least
// kHeapSampleFirstBytes).
inline constexpr std::uint64_t kInUseStepDivisor = 128;
inline constexpr std::uint64_t kGrowthChecksPerPeak = 256;

}  // namespace strata::lab::config
