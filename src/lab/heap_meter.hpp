// Memory in use as the fragmentation meter defines it (docs/lab.md, and
// lab/strata_lab/frag.py's heap_resident_bytes, which must agree): Rss + Swap
// of the process's private anonymous mappings — [heap] and every mapping with
// no file (inode 0), named [anon:...] ones included. Read from
// /proc/self/smaps with raw system calls: it runs inside malloc, so it may
// not allocate.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "lab_config.hpp"
#include "live_mirror.hpp"

namespace strata::lab {

// Bytes in use now, or 0 when smaps cannot be read.
std::uint64_t heap_resident_bytes() noexcept;

// The process's resident high-water mark since its exec (VmHWM of
// /proc/self/status), or 0 when it cannot be read. Unlike ru_maxrss it leaves
// out the memory of the process that started it (Linux counts the pre-exec
// image, a copy of the parent, in ru_maxrss).
std::uint64_t peak_resident_bytes() noexcept;

// Memory in use measured at peaks of live bytes, so that a peak shorter than
// the fragmentation meter's sampling interval is not missed. A sample is taken
//   - when live bytes fall just after a new peak (the peak is over and its
//     memory is still held): if that peak passed the last sampled level by
//     1/32 (and at least 64 KiB);
//   - while live bytes keep growing without a free: each time they pass the
//     last sampled level by an eighth;
//   - at exit, on the same rule as a fall.
// The steps are geometric, which bounds the cost to a few hundred smaps reads
// however large the heap grows. Thread-safe: one sampler at a time; a thread
// that finds another sampling skips.
class PeakHeapSampler {
 public:
  // Live bytes have risen to live_bytes (a new peak).
  void rose(std::uint64_t live_bytes, LiveMirrorPage* mirror) noexcept {
    if (live_bytes >= next_on_growth_.load(std::memory_order_relaxed)) sample(live_bytes, mirror);
  }
  // Live bytes have fallen; peak is the highest level they reached.
  void fell(std::uint64_t peak, LiveMirrorPage* mirror) noexcept {
    if (peak >= next_on_fall_.load(std::memory_order_relaxed)) sample(peak, mirror);
  }

  // A forked child starts its own peaks.
  void reset() noexcept {
    next_on_growth_.store(config::kHeapSampleFirstBytes, std::memory_order_relaxed);
    next_on_fall_.store(config::kHeapSampleFirstBytes, std::memory_order_relaxed);
    peak_.store(0, std::memory_order_relaxed);
    samples_.store(0, std::memory_order_relaxed);
    busy_.store(false, std::memory_order_relaxed);
  }

  std::uint64_t peak() const noexcept { return peak_.load(std::memory_order_relaxed); }
  std::uint64_t samples() const noexcept { return samples_.load(std::memory_order_relaxed); }

 private:
  static std::uint64_t step(std::uint64_t level, std::uint64_t divisor) noexcept {
    return level + std::max(level / divisor, config::kHeapSampleFirstBytes);
  }

  void sample(std::uint64_t level, LiveMirrorPage* mirror) noexcept {
    if (busy_.exchange(true, std::memory_order_acquire)) return;
    if (level >= next_on_fall_.load(std::memory_order_relaxed)) {
      next_on_growth_.store(step(level, 8), std::memory_order_relaxed);
      next_on_fall_.store(step(level, 32), std::memory_order_relaxed);
      if (const std::uint64_t resident = heap_resident_bytes(); resident != 0) {
        if (resident > peak_.load(std::memory_order_relaxed)) peak_.store(resident, std::memory_order_relaxed);
        samples_.fetch_add(1, std::memory_order_relaxed);
        if (mirror != nullptr) {
          mirror->peak_heap_resident_bytes.store(peak(), std::memory_order_relaxed);
          mirror->heap_samples.store(samples(), std::memory_order_relaxed);
        }
      }
    }
    busy_.store(false, std::memory_order_release);
  }

  std::atomic<std::uint64_t> next_on_growth_{config::kHeapSampleFirstBytes};
  std::atomic<std::uint64_t> next_on_fall_{config::kHeapSampleFirstBytes};
  std::atomic<std::uint64_t> peak_{0};
  std::atomic<std::uint64_t> samples_{0};
  std::atomic<bool> busy_{false};
};

}  // namespace strata::lab
