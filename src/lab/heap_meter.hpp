// Memory in use as the fragmentation meter defines it (docs/lab.md, and
// lab/strata_lab/frag.py's heap_resident_bytes, which must agree): Rss + Swap
// - LazyFree (pages given back with MADV_FREE are discarded, as Vam counts
// them, though Rss keeps them until the kernel reclaims them)
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

// Anonymous resident memory of the process (resident minus shared pages of
// /proc/self/statm, i.e. RssAnon), or 0 when it cannot be read. A cheap read
// (one short line) that rises whenever memory in use does; the memory mode
// uses it to decide when an smaps read is worth taking.
std::uint64_t anonymous_resident_bytes() noexcept;

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
//
// measure_closely() (the profiler's memory mode) makes the fall step
// 1/kInUseStepDivisor and adds samples away from live peaks: allocated()
// looks at anonymous_resident_bytes() every so many bytes handed out and
// samples when it passed its level at the last sample by the same step. With
// N the peak live bytes over 4 KiB (or peak memory in use over 64 KiB), each
// trigger reads smaps at most about 1 + 129 x ln(N) times (1,600 for a 1 GiB
// peak). statm
// counts lazily freed pages (MADV_FREE) as resident, so memory in use that
// grows back into them is seen at live peaks only.
class PeakHeapSampler {
 public:
  // Live bytes have risen to live_bytes (a new peak).
  void rose(std::uint64_t live_bytes, LiveMirrorPage* mirror) noexcept {
    if (live_bytes >= next_on_growth_.load(std::memory_order_relaxed)) sample_at_live(live_bytes, mirror);
  }
  // Live bytes have fallen; peak is the highest level they reached.
  void fell(std::uint64_t peak, LiveMirrorPage* mirror) noexcept {
    if (peak >= next_on_fall_.load(std::memory_order_relaxed)) sample_at_live(peak, mirror);
  }
  // Memory mode: `bytes` were just handed out (and touched).
  void allocated(std::uint64_t bytes, LiveMirrorPage* mirror) noexcept {
    if (!close_) return;
    const std::uint64_t since = bytes_since_check_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (since < std::max(peak() / config::kGrowthChecksPerPeak, config::kHeapSampleFirstBytes)) return;
    bytes_since_check_.store(0, std::memory_order_relaxed);
    checks_.fetch_add(1, std::memory_order_relaxed);
    if (anonymous_resident_bytes() >= next_on_anonymous_.load(std::memory_order_relaxed)) {
      if (busy_.exchange(true, std::memory_order_acquire)) return;
      take_sample(mirror);
      busy_.store(false, std::memory_order_release);
    }
  }

  // Before any allocation: the memory mode's finer steps and growth checks,
  // from a first level of one page (a small program is measured too).
  void measure_closely() noexcept {
    close_ = true;
    reset();
  }

  // A forked child starts its own peaks.
  void reset() noexcept {
    const std::uint64_t first = close_ ? config::kPageBytes : config::kHeapSampleFirstBytes;
    next_on_growth_.store(first, std::memory_order_relaxed);
    next_on_fall_.store(first, std::memory_order_relaxed);
    next_on_anonymous_.store(0, std::memory_order_relaxed);
    bytes_since_check_.store(0, std::memory_order_relaxed);
    peak_.store(0, std::memory_order_relaxed);
    samples_.store(0, std::memory_order_relaxed);
    checks_.store(0, std::memory_order_relaxed);
    busy_.store(false, std::memory_order_relaxed);
  }

  std::uint64_t peak() const noexcept { return peak_.load(std::memory_order_relaxed); }
  std::uint64_t samples() const noexcept { return samples_.load(std::memory_order_relaxed); }
  // Memory mode: looks at anonymous resident memory (statm reads).
  std::uint64_t growth_checks() const noexcept { return checks_.load(std::memory_order_relaxed); }

 private:
  static std::uint64_t step(std::uint64_t level, std::uint64_t divisor) noexcept {
    return level + std::max(level / divisor, config::kHeapSampleFirstBytes);
  }

  void sample_at_live(std::uint64_t level, LiveMirrorPage* mirror) noexcept {
    if (busy_.exchange(true, std::memory_order_acquire)) return;
    if (level >= next_on_fall_.load(std::memory_order_relaxed)) {
      next_on_growth_.store(step(level, 8), std::memory_order_relaxed);
      // The memory mode's fine step has no 64 KiB floor: it must stay within 1/128 of small peaks too.
      next_on_fall_.store(close_ ? level + level / config::kInUseStepDivisor + 1 : step(level, 32),
                          std::memory_order_relaxed);
      take_sample(mirror);
    }
    busy_.store(false, std::memory_order_release);
  }

  // With busy_ held.
  void take_sample(LiveMirrorPage* mirror) noexcept {
    if (close_) {
      const std::uint64_t anonymous = anonymous_resident_bytes();
      next_on_anonymous_.store(anonymous + anonymous / config::kInUseStepDivisor + 1, std::memory_order_relaxed);
    }
    const std::uint64_t resident = heap_resident_bytes();
    if (resident == 0) return;
    if (resident > peak_.load(std::memory_order_relaxed)) peak_.store(resident, std::memory_order_relaxed);
    samples_.fetch_add(1, std::memory_order_relaxed);
    if (mirror != nullptr) {
      mirror->peak_heap_resident_bytes.store(peak(), std::memory_order_relaxed);
      mirror->heap_samples.store(samples(), std::memory_order_relaxed);
    }
  }

  std::atomic<std::uint64_t> next_on_growth_{config::kHeapSampleFirstBytes};
  std::atomic<std::uint64_t> next_on_fall_{config::kHeapSampleFirstBytes};
  std::atomic<std::uint64_t> next_on_anonymous_{0};
  std::atomic<std::uint64_t> bytes_since_check_{0};
  std::atomic<std::uint64_t> peak_{0};
  std::atomic<std::uint64_t> samples_{0};
  std::atomic<std::uint64_t> checks_{0};
  std::atomic<bool> busy_{false};
  bool close_ = false;
};

}  // namespace strata::lab
