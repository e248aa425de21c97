// Live-data counters published in a small shared file (env STRATA_LAB_LIVE_OUT,
// "%p" = pid, so each process of a program tree has its own), so the
// fragmentation meter can sample "bytes requested and not freed" while the
// program runs. Layout (little-endian u64 at these byte offsets):
//   0 magic "STRLIVE1", 8 live_bytes, 16 live_objects, 24 peak_live_bytes,
//   32 peak_live_objects, 40 pid of the writer,
//   48 peak_heap_resident_bytes and 56 heap_samples: memory in use measured by
//   the shim itself at new peaks of live bytes (heap_meter.hpp), so that a
//   peak shorter than the meter's sampling interval is not missed.
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
  std::atomic<std::uint64_t> peak_heap_resident_bytes;
  std::atomic<std::uint64_t> heap_samples;
};

inline constexpr std::uint64_t kLiveMirrorMagic = 0x314556494c525453ull;  // "STRLIVE1" in memory

// Maps the file named by STRATA_LAB_LIVE_OUT (created or truncated), or nullptr
// when the variable is unset or the file cannot be made. In a forked child
// (in_child), only a per-process name ("%p") is opened: a shared name would
// clobber the parent's counters.
LiveMirrorPage* open_live_mirror(bool in_child = false) noexcept;

}  // namespace strata::lab
