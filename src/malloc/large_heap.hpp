// Large objects (Vam §3.1 "Large Objects"): kSmallMax < size <= kLargeMax.
//
// Large objects share multi-page regions (segments of kind kLarge), each object
// with a 16-byte boundary-tag header. Free chunks sit in segregated bins about
// 12.5% apart (two-level: power of two, then 8 steps), found through two
// bitmaps in O(1) — the "hierarchical index into the free list table" Vam
// suggests instead of its linear scan. A bin at or above the rounded-up request
// always fits (good fit); the chunk is split and the rest goes back. A freed
// chunk immediately coalesces with free neighbours. Where the rest of a split,
// or a chunk grown by coalescing, stays in the bin it was in, it takes that
// chunk's place in the bin's list: no list or bitmap work.
//
// Returning memory: free chunks are "dirty" until their inner pages are
// discarded; once kLargeDirtyLimit bytes are dirty the arena discards the
// biggest down to kLargeDirtyKept (Vam discards at once; the limits are the
// hysteresis). A region that becomes
// completely free is unmapped, except for a few spares: kLargeSpareRegions,
// raised by demand up to kLargeSpareRegionsMax when regions are mapped again
// soon after being unmapped.
//
// Threads: kLargeArenas arenas, each with one lock (ArenaLock: one word, one
// atomic instruction to take and one to give); a thread allocates from
// arena (heap number % kLargeArenas), and a chunk is freed to the arena of its
// region. Large allocations are rare and expensive per byte anyway, so a lock
// here costs little; it is the one layer that is not lock-free on its fast path.
// A free never waits for it, though: when the lock is busy the chunk goes onto
// the arena's atomic list of deferred frees, which the holder (or the next
// one) releases. A free from a thread that allocates from another arena does
// not even try the lock (it would hold it against the arena's own threads,
// which then sleep on it): it defers, up to kLargeDeferredBytes per arena.
#pragma once
#include <cstddef>
#include <cstdint>

#include "checked.hpp"

namespace strata::malloc_detail {

class LargeArena;

LargeArena& large_arena(std::size_t number) noexcept;
// nullptr + ENOMEM. align is a power of two >= 16.
void* large_malloc(LargeArena& arena, std::size_t size, std::size_t align) noexcept;
// The same, reading as zeros (calloc): clears only what a fresh or purged
// chunk does not already hold as zeros. nullptr when out of memory.
void* large_calloc(LargeArena& arena, std::size_t size) noexcept;
// `mine`: the arena the freeing thread allocates from.
void large_free(void* p, const LargeArena& mine) noexcept;
LargeArena& large_arena_of(const void* p) noexcept;
std::size_t large_deferred_bytes() noexcept;  // freed, not yet released (all arenas)
// Purging on a clock: the pages of free chunks that have stayed dirty
// purge_delay_ms() by `now` go back to the OS, in every arena whose lock is
// free. Cheap when none is due (slow paths of every size ask).
void large_purge_if_due(std::uint32_t now) noexcept;
// Do huge pages back the region of large object p (calloc then faults in each
// 2 MiB extent of it whole, once)? Statistics and tests.
bool large_region_has_huge_pages(const void* p) noexcept;
std::size_t large_usable_size(const void* p) noexcept;
// The same, after the checks of every build (realloc, malloc_usable_size).
std::size_t large_checked_usable_size(const void* p, Use use) noexcept;
// Grow or shrink in place to hold `size` bytes; false if it cannot.
bool large_resize(void* p, std::size_t size) noexcept;
// Checked mode: report and abort unless p is a live large object.
void large_check(const void* p) noexcept;

struct LargeStats {
  std::size_t regions = 0;
  std::size_t live_objects = 0;
  std::size_t live_bytes = 0;
  std::size_t free_bytes = 0;
  std::size_t dirty_bytes = 0;   // free, not yet discarded (resident, or may be)
  std::size_t largest_free = 0;  // the biggest free chunk
  std::size_t quarantined_objects = 0;  // hardened: freed, protected, not yet reusable
  std::size_t quarantined_bytes = 0;
  std::size_t largest_spare_limit = 0;  // empty regions an arena keeps mapped, at most (by demand)
};
LargeStats large_stats() noexcept;
// One arena's figures (large_arena_of), added to `s`.
LargeStats large_arena_stats(LargeArena& arena, LargeStats s = {}) noexcept;
// Tests: what is wrong with the arenas' regions, bins and counts (the first
// problem found), or nullptr. Walks every chunk: slow.
const char* large_verify() noexcept;

void large_lock_all() noexcept;    // fork
void large_unlock_all() noexcept;

}  // namespace strata::malloc_detail
