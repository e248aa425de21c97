// Huge objects (> kLargeMax): Vam's "extremely large" objects, each with a
// segment header at the start of its run, so that free() finds it like any
// other segment. Objects up to kHugeRegionObjectMax live in regions of
// address space reserved once (kHugeRegionBytes each, read-write, no swap
// reserved): an object takes a run of whole segments there, chosen to reuse
// the most resident pages of freed objects; realloc grows into the free
// segments behind the run. Placing, growing, shrinking and freeing need no
// system call. Freed pages stay resident (the cache) up to kHugeCacheBytes;
// beyond it the least recently freed are discarded. Cached pages elsewhere
// fill what a new run lacks, and a realloc that cannot grow in place, by
// moving pages (mremap). Bigger objects, giant alignments, and everything
// when no region can be reserved (RLIMIT_AS, strict overcommit) get a mapping
// of their own; a few freed ones are cached whole.
#pragma once
#include <cstddef>

#include "checked.hpp"

namespace strata::malloc_detail {

// nullptr + ENOMEM. align: a power of two >= 16. *zeroed tells whether the
// memory is known to be zero (fresh from the OS).
void* huge_malloc(std::size_t size, std::size_t align, bool* zeroed) noexcept;
void huge_free(void* p) noexcept;
std::size_t huge_usable_size(const void* p) noexcept;
// The checks of every build: p must be the start of a live huge object (its
// header in the area map, of kind kHuge); reports and aborts if not.
void huge_check_live(const void* p, Use use) noexcept;
// For a pointer that no live segment holds: true if it is a huge object whose
// mapping of its own was freed and is kept in the cache (still mapped), so a
// second free is a double free, not an invalid pointer.
bool huge_freed_and_cached(const void* p) noexcept;
// In place, or false (then huge_move, else the caller copies).
bool huge_resize(void* p, std::size_t size) noexcept;
// Objects with a mapping of their own grow by moving the pages (mremap) to a
// new aligned mapping, not the bytes. nullptr if it cannot (a region object:
// the caller copies it into a new run).
void* huge_move(void* p, std::size_t size) noexcept;

struct HugeStats {
  std::size_t live_objects = 0;
  std::size_t live_bytes = 0;      // handed out to live objects (page rounded)
  std::size_t cached_bytes = 0;    // resident pages of freed objects kept for reuse
  std::size_t cache_entries = 0;   // runs of free segments holding them
  std::size_t reused_bytes = 0;    // cached pages handed out again, in total
  std::size_t moved_bytes = 0;     // pages moved by mremap: realloc moves, gaps filled from the cache
  std::size_t reserved_bytes = 0;  // address space of the regions
  std::size_t discarded_bytes = 0; // cached pages given back to the OS (beyond kHugeCacheBytes), in total
  std::size_t fresh_bytes = 0;     // handed out in regions with no resident page there: faulted in, in total
  std::size_t grown_in_place = 0;  // reallocs that grew a region object into the free segments behind it
};
HugeStats huge_stats() noexcept;

// Gives every cached page back to the OS (tests, and a future malloc_trim).
// The cache on a clock (cfg::kPurgeDelayMs): has anything in it waited
// purge_delay_ms() by `now`? Cheap (no lock): slow paths of every size ask.
bool huge_purge_due(std::uint32_t now) noexcept;
// Discards what has waited that long (skipped if the heap's lock is busy).
void huge_purge_expired(std::uint32_t now) noexcept;
void huge_discard_cache() noexcept;

void huge_lock() noexcept;  // fork
void huge_unlock() noexcept;

}  // namespace strata::malloc_detail
