// Live-data counters published in a small shared file (env STRATA_LAB_LIVE_OUT), so
// the fragmentation meter can sample "bytes requested and not freed" while the
// program runs. Layout (little-endian u64 at these byte offsets):
//   0 magic "STRLIVE1", 8 live_bytes, 16 live_objects, 24 peak_live_bytes,
//   32 peak_live_objects, 40 pid of the writer.
// Values are stored relaxed: a sample may be a few operations stale.
#pragma once
#include <atomic>
#include <cstdint>

namespace strata::lab {

struct LiveMirrorPage {
  std::uint64_t magic;
  std::atomic<std::uint64_t> live_bytes;
  std::atomic<std::uint64_t> live_objects;
  std::atomic<std::uint64_t> peak_live_bytes;
  std::atomic<std::uint64_t> peak_live_objects;
  std::uint64_t pid;
};

inline constexpr std::uint64_t kLiveMirrorMagic = 0x314556494c525453ull;  // "STRLIVE1" in memory

// Maps the file named by STRATA_LAB_LIVE_OUT (created or truncated), or nullptr
// when the variable is unset or the file cannot be made.
LiveMirrorPage* open_live_mirror() noexcept;

}  // namespace strata::lab
