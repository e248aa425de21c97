#include "huge_heap.hpp"

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include "config.hpp"
#include "options.hpp"
#include "os.hpp"
#include "segment.hpp"
#include "strata/assert.hpp"

namespace strata::malloc_detail {

namespace {

constexpr std::size_t kHugeHeader = 64;  // the object starts here unless it needs more alignment
constexpr std::size_t kSegment = cfg::kSegmentSize;
constexpr std::size_t kRegionSegments = cfg::kHugeRegionBytes / kSegment;
constexpr std::uint32_t kNoRegion = ~std::uint32_t{0};
// The hardened build's guard page right after each object's page-rounded end
// (inside its run); the object is placed right-aligned against it.
constexpr std::size_t kGuard = cfg::kGuardPages ? cfg::kOsPageSize : 0;

// The header of a huge object, at the start of its run (or mapping).
struct HugeHeader {
  SegmentHeader segment;       // map_base: the run's start; mapped_bytes: the bytes handed out (page rounded)
  std::size_t run_bytes;       // address space the object owns: whole segments in a region
  std::size_t touched_bytes;   // the most it ever handed out: its pages beyond may not be resident
  std::size_t object_offset;   // where the object starts, from the header
  std::uint32_t region;        // index into g_regions, or kNoRegion for a mapping of its own
  // Allocated at or above glibc's mmap threshold as it stood then: glibc
  // would have mapped it and would unmap it when freed, so its free discards
  // its pages (not only the first free of a size, first_free_of_its_size).
  bool erase_on_free;
};
static_assert(sizeof(HugeHeader) <= kHugeHeader);

// A reserved range of `segments` segments (kRegionSegments, fewer under a
// small RLIMIT_AS). A segment is used (part of a live object's run) or free;
// a free segment may still hold resident pages of the objects freed there (a
// prefix of `resident` bytes: objects touch their runs from the start):
// those are the cache.
struct Region {
  char* base;
  std::size_t segments;
  std::uint64_t used[kRegionSegments / 64];
  std::uint32_t resident[kRegionSegments];  // bytes from the segment's start that may be resident
  std::uint32_t freed_at[kRegionSegments];  // g_clock when it was freed: the oldest is discarded first
  std::uint32_t freed_ms[kRegionSegments];  // coarse_clock_ms() then: discarded once purge_delay_ms() old
};

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
Region g_regions[cfg::kHugeRegions];
std::size_t g_region_count = 0;
std::size_t g_cached_bytes = 0;  // resident bytes in free segments
std::uint32_t g_clock = 0;
// The cache on a clock: is anything cached, and the coarse clock when the
// oldest of it was freed (no later than that: a purge recomputes it). Read
// without the lock by huge_purge_due, the check other slow paths make.
std::atomic<bool> g_cache_waiting{false};
std::atomic<std::uint32_t> g_cache_oldest_ms{0};
std::size_t g_discarded_bytes = 0;
std::size_t g_reserved_bytes = 0;
std::size_t g_grown_in_place = 0;  // reallocs that grew into the free segments behind
std::atomic<std::size_t> g_live_objects{0};
std::atomic<std::size_t> g_live_bytes{0};
std::atomic<std::size_t> g_reused_bytes{0};  // resident pages of freed objects handed out again
std::size_t g_fresh_bytes = 0;  // handed out by regions where no page was resident: faulted in
std::atomic<std::size_t> g_moved_bytes{0};   // pages moved by mremap: realloc moves, gaps filled from the cache

std::size_t round_to_os_page(std::size_t n) noexcept { return (n + cfg::kOsPageSize - 1) & ~(cfg::kOsPageSize - 1); }
std::size_t segments_for(std::size_t bytes) noexcept { return (bytes + kSegment - 1) / kSegment; }
std::size_t min_size(std::size_t a, std::size_t b) noexcept { return a < b ? a : b; }

HugeHeader* header_of(const void* p) noexcept { return reinterpret_cast<HugeHeader*>(segment_of(p)); }

// The guard page behind a live object (cfg::kGuardPages): set when it is
// placed, lifted before its run changes hands or size (a run moved or
// cached must be read-write throughout), set again at the new end.
void guard_object(HugeHeader* header) noexcept {
  if constexpr (cfg::kGuardPages) (void)protect_guard(reinterpret_cast<char*>(header) + header->segment.mapped_bytes, kGuard);
}
void unguard_object(HugeHeader* header) noexcept {
  if constexpr (cfg::kGuardPages) unprotect_guard(reinterpret_cast<char*>(header) + header->segment.mapped_bytes, kGuard);
}

// ---- Regions (the caller holds g_lock) ----------------------------------------

bool is_used(const Region& r, std::size_t i) noexcept { return (r.used[i / 64] >> (i % 64)) & 1; }
void set_used(Region& r, std::size_t i, bool used) noexcept {
  STRATA_ASSERT(i < r.segments && ((r.used[i / 64] >> (i % 64)) & 1) != used);  // a segment changes hands once
  if (used) {
    r.used[i / 64] |= std::uint64_t{1} << (i % 64);
  } else {
    r.used[i / 64] &= ~(std::uint64_t{1} << (i % 64));
  }
}

// The bytes of segment j of a run that an extent of `bytes` covers.
std::size_t part_in_segment(std::size_t bytes, std::size_t j) noexcept {
  return bytes <= j * kSegment ? 0 : min_size(bytes - j * kSegment, kSegment);
}

// Segments [first, first+n) of r leave a run whose first `touched` bytes
// (from `first`) may be resident: they join the cache.
// Something freed into the cache now: the clock starts for it.
void note_cached(std::uint32_t now) noexcept {
  if (!g_cache_waiting.load(std::memory_order_relaxed)) {
    g_cache_oldest_ms.store(now, std::memory_order_relaxed);
    g_cache_waiting.store(true, std::memory_order_release);
  }
}

void give_segments(Region& r, std::size_t first, std::size_t n, std::size_t touched) noexcept {
  ++g_clock;
  std::uint32_t now = coarse_clock_ms();
  note_cached(now);
  for (std::size_t j = 0; j < n; ++j) {
    std::size_t i = first + j;
    auto part = static_cast<std::uint32_t>(part_in_segment(touched, j));
    if (part > r.resident[i]) r.resident[i] = part;
    STRATA_ASSERT(r.resident[i] <= kSegment);
    g_cached_bytes += r.resident[i];
    r.freed_at[i] = g_clock;
    r.freed_ms[i] = now;
    set_used(r, i, false);
  }
}

// Segments [first, first+n) of r leave a run whose first `moved` bytes were
// moved away (fresh pages mapped there): what may be resident is only what
// lay beyond them.
void give_moved_segments(Region& r, std::size_t first, std::size_t n, std::size_t moved) noexcept {
  ++g_clock;
  std::uint32_t now = coarse_clock_ms();
  note_cached(now);
  for (std::size_t j = 0; j < n; ++j) {
    std::size_t i = first + j;
    if (r.resident[i] <= part_in_segment(moved, j)) r.resident[i] = 0;
    g_cached_bytes += r.resident[i];
    r.freed_at[i] = g_clock;
    r.freed_ms[i] = now;
    set_used(r, i, false);
  }
}

// Keeps the cache within `limit`: the pages of the least recently freed run
// (the free segments stamped with the oldest time, next to each other) go
// back to the OS in one system call, until the cache fits.
void trim_cache(std::size_t limit = cfg::kHugeCacheBytes) noexcept {
  while (g_cached_bytes > limit) {
    Region* oldest = nullptr;
    std::size_t at = 0;
    for (std::size_t k = 0; k < g_region_count; ++k) {
      Region& r = g_regions[k];
      for (std::size_t i = 0; i < r.segments; ++i) {
        if (r.resident[i] && !is_used(r, i) &&
            (!oldest || static_cast<std::int32_t>(r.freed_at[i] - oldest->freed_at[at]) < 0)) {
          oldest = &r;
          at = i;
        }
      }
    }
    if (!oldest) return;  // cannot happen: g_cached_bytes counts resident free segments
    std::uint32_t stamp = oldest->freed_at[at];
    std::size_t end = at;
    std::size_t bytes = 0;
    while (end < oldest->segments && !is_used(*oldest, end) && oldest->freed_at[end] == stamp && oldest->resident[end]) {
      bytes = (end - at) * kSegment + oldest->resident[end];
      g_cached_bytes -= oldest->resident[end];
      oldest->resident[end] = 0;
      ++end;
    }
    discard_by_remapping(oldest->base + at * kSegment, bytes);
    g_discarded_bytes += bytes;
  }
}

// The resident bytes of segment j of a run that the bytes [skip, extent) of
// the run reuse.
std::size_t reuse_in_segment(std::size_t resident, std::size_t skip, std::size_t extent, std::size_t j) noexcept {
  std::size_t upto = min_size(resident, part_in_segment(extent, j));
  std::size_t skipped = min_size(resident, part_in_segment(skip, j));
  return upto - skipped;
}

// Segments [first, first+n) of r become part of a live run: their resident
// pages leave the cache. Returns those resident bytes that the bytes [skip,
// extent) of the run reuse (the first `skip` bytes are replaced by moved
// pages: resident ones there are dropped), and whether [0, extent) is all
// fresh (zero) pages.
std::size_t take_segments(Region& r, std::size_t first, std::size_t n, std::size_t skip, std::size_t extent,
                          bool* zeroed) noexcept {
  std::size_t reused = 0;
  bool fresh = true;
  for (std::size_t j = 0; j < n; ++j) {
    std::size_t i = first + j;
    set_used(r, i, true);
    g_cached_bytes -= r.resident[i];
    reused += reuse_in_segment(r.resident[i], skip, extent, j);
    g_discarded_bytes += min_size(r.resident[i], part_in_segment(skip, j));
    if (r.resident[i] && part_in_segment(extent, j)) fresh = false;
  }
  if (zeroed) *zeroed = fresh;
  return reused;
}

// Where a run of n segments whose bytes [skip, extent) will be written goes
// (skip: the prefix that moved pages fill): the free place that reuses the
// most resident bytes (fewest page faults), then the one with the most free
// space behind it (room to grow in place), then the lowest. False if no
// region has room.
bool find_place(std::size_t n, std::size_t skip, std::size_t extent, std::size_t* region, std::size_t* first) noexcept {
  bool found = false;
  std::size_t best_reuse = 0, best_room = 0;
  for (std::size_t k = 0; k < g_region_count; ++k) {
    const Region& r = g_regions[k];
    std::size_t i = 0;
    while (i < r.segments) {
      if (is_used(r, i)) {
        ++i;
        continue;
      }
      std::size_t run_end = i;
      while (run_end < r.segments && !is_used(r, run_end)) ++run_end;
      for (std::size_t start = i; start + n <= run_end; ++start) {
        std::size_t reuse = 0;
        for (std::size_t j = 0; j < n; ++j) reuse += reuse_in_segment(r.resident[start + j], skip, extent, j);
        std::size_t room = run_end - start - n;
        if (!found || reuse > best_reuse || (reuse == best_reuse && room > best_room)) {
          found = true;
          best_reuse = reuse;
          best_room = room;
          *region = k;
          *first = start;
        }
      }
      i = run_end;
    }
  }
  return found;
}

// Every page move leaves the moved pages a kernel mapping of their own until
// they are moved out or discarded again: moves stop while the process has
// this many mappings (checked every kMoveCheckPeriod attempts), far below
// the kernel's limit (vm.max_map_count, 65530 by default), and resume when
// discarding by remapping has merged them back. Page moves are an
// optimisation only: without them pages are copied or faulted in.
constexpr std::size_t kMaxMappingsForMoves = 2048;
constexpr std::size_t kMoveCheckPeriod = 64;
std::size_t g_move_attempts = 0;
bool g_moves_allowed = true;

bool may_move_pages() noexcept {  // under g_lock
  if (++g_move_attempts % kMoveCheckPeriod == 0) g_moves_allowed = count_mappings() < kMaxMappingsForMoves;
  return g_moves_allowed;
}

// Gaps of fresh pages smaller than this are left to fault in: two system
// calls cost about as much as this many page faults.
constexpr std::size_t kMinFill = 32 * cfg::kOsPageSize;

// The free segment whose resident pages were freed longest ago, or false.
bool oldest_cached(std::size_t* region, std::size_t* segment) noexcept {
  bool found = false;
  for (std::size_t k = 0; k < g_region_count; ++k) {
    const Region& r = g_regions[k];
    for (std::size_t i = 0; i < r.segments; ++i) {
      if (r.resident[i] < kMinFill || is_used(r, i)) continue;
      if (!found || static_cast<std::int32_t>(r.freed_at[i] - g_regions[*region].freed_at[*segment]) < 0) {
        found = true;
        *region = k;
        *segment = i;
      }
    }
  }
  return found;
}

// The run [first, first+n) of region k was just taken and its bytes [skip,
// extent) are about to be written: where they are not resident, the kernel
// moves resident pages of cached free segments there (the tail of their
// resident prefix), so that cached pages serve any placement, not only
// their own. Under g_lock (a source must not be handed out meanwhile).
// Returns the bytes filled; what stays a gap is counted in g_fresh_bytes.
std::size_t fill_gaps(std::size_t k, std::size_t first, std::size_t n, std::size_t skip, std::size_t extent) noexcept {
  Region& r = g_regions[k];
  std::size_t filled = 0;
  int failures = 0;
  for (std::size_t j = 0; j < n; ++j) {
    std::size_t i = first + j;
    std::size_t start = r.resident[i] > part_in_segment(skip, j) ? r.resident[i] : part_in_segment(skip, j);
    std::size_t end = part_in_segment(extent, j);
    while (end > start && end - start >= kMinFill && failures < 4) {
      std::size_t sk = 0, si = 0;
      if (!may_move_pages() || !oldest_cached(&sk, &si)) break;
      Region& src = g_regions[sk];
      std::size_t len = min_size(end - start, src.resident[si]);
      char* from = src.base + si * kSegment + src.resident[si] - len;
      MoveResult moved = move_within_reservation(from, len, r.base + i * kSegment + start);
      if (moved == MoveResult::kNotMoved) {  // the source spans two kernel mappings: discard it instead
        ++failures;
        discard(src.base + si * kSegment, src.resident[si]);
        g_discarded_bytes += src.resident[si];
        g_cached_bytes -= src.resident[si];
        src.resident[si] = 0;
        continue;
      }
      src.resident[si] -= static_cast<std::uint32_t>(len);
      g_cached_bytes -= len;
      if (moved == MoveResult::kMovedLeavingAHole) {  // another mapping took the hole: never hand it out
        g_cached_bytes -= src.resident[si];
        src.resident[si] = 0;
        set_used(src, si, true);
      }
      start += len;
      r.resident[i] = static_cast<std::uint32_t>(start);
      filled += len;
    }
    if (end > start) g_fresh_bytes += end - start;  // faults in
  }
  g_reused_bytes.fetch_add(filled, std::memory_order_relaxed);
  g_moved_bytes.fetch_add(filled, std::memory_order_relaxed);
  return filled;
}

// Regions smaller than this are not worth reserving.
constexpr std::size_t kMinRegionBytes = 8 * kSegment;

bool add_region() noexcept {
  if (g_region_count == cfg::kHugeRegions) return false;
  // All regions together within the budget: they are never unmapped.
  std::size_t budget = address_space_budget(cfg::kHugeRegions * cfg::kHugeRegionBytes, kSegment);
  if (budget < g_reserved_bytes + kMinRegionBytes) return false;
  std::size_t bytes = min_size(budget - g_reserved_bytes, cfg::kHugeRegionBytes);
  void* base = reserve_address_space(bytes, kSegment);
  if (!base) return false;
  Region& r = g_regions[g_region_count];
  r = Region{};
  r.base = static_cast<char*>(base);
  r.segments = bytes / kSegment;
  g_region_count++;
  g_reserved_bytes += bytes;
  return true;
}

// A run in a region for an object whose first `bytes` are used, or nullptr.
HugeHeader* place_in_region(std::size_t bytes, bool* zeroed) noexcept {
  std::size_t n = segments_for(bytes + kGuard);
  std::size_t k = 0, first = 0;
  pthread_mutex_lock(&g_lock);
  bool found = find_place(n, 0, bytes, &k, &first);
  if (!found && add_region()) found = find_place(n, 0, bytes, &k, &first);
  if (found) {
    std::size_t reused = take_segments(g_regions[k], first, n, 0, bytes, zeroed);
    std::size_t filled = fill_gaps(k, first, n, 0, bytes);
    if (filled > 0) *zeroed = false;
    g_reused_bytes.fetch_add(reused, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&g_lock);
  if (!found) return nullptr;
  char* base = g_regions[k].base + first * kSegment;
  auto* header = new (base) HugeHeader{};
  header->run_bytes = n * kSegment;
  header->region = static_cast<std::uint32_t>(k);
  return header;
}

std::size_t first_segment(const HugeHeader* h) noexcept {
  return static_cast<std::size_t>(static_cast<const char*>(h->segment.map_base) - g_regions[h->region].base) / kSegment;
}

// ---- Objects with a mapping of their own ------------------------------------------

// Freed mappings of their own (not giant-aligned), kept whole for reuse in
// place when regions cannot take huge objects (strict overcommit, a small
// RLIMIT_AS): without them every such object would fault all its pages in.
// Oldest first; within kHugeCacheBytes together with the regions' cache.
// Under g_lock.
struct OwnMapping {
  void* base;
  std::size_t bytes;
  std::uint32_t freed_ms;  // coarse_clock_ms() when it was cached
};
constexpr std::size_t kOwnCacheEntries = 8;
OwnMapping g_own_cache[kOwnCacheEntries];
std::size_t g_own_count = 0;
std::size_t g_own_bytes = 0;

void own_cache_remove_at(std::size_t i) noexcept {
  g_own_bytes -= g_own_cache[i].bytes;
  for (std::size_t j = i + 1; j < g_own_count; ++j) g_own_cache[j - 1] = g_own_cache[j];
  --g_own_count;
}

// The smallest cached mapping that holds `bytes` without wasting more than
// as much again, or nullptr.
void* take_own_cached(std::size_t bytes, std::size_t* got) noexcept {
  void* base = nullptr;
  pthread_mutex_lock(&g_lock);
  std::size_t best = g_own_count;
  for (std::size_t i = 0; i < g_own_count; ++i) {
    std::size_t have = g_own_cache[i].bytes;
    if (have >= bytes && have / 2 <= bytes && (best == g_own_count || have < g_own_cache[best].bytes)) best = i;
  }
  if (best < g_own_count) {
    base = g_own_cache[best].base;
    *got = g_own_cache[best].bytes;
    own_cache_remove_at(best);
  }
  pthread_mutex_unlock(&g_lock);
  if (base) g_reused_bytes.fetch_add(*got, std::memory_order_relaxed);
  return base;
}

// Keeps a freed mapping of its own, or unmaps it (and what it evicts).
void cache_or_unmap_own(void* base, std::size_t bytes) noexcept {
  OwnMapping evicted[kOwnCacheEntries + 1];
  std::size_t n_evicted = 0;
  pthread_mutex_lock(&g_lock);
  if (bytes <= cfg::kHugeCacheBytes / 2) {
    while (g_own_count > 0 && (g_own_count == kOwnCacheEntries || g_cached_bytes + g_own_bytes + bytes > cfg::kHugeCacheBytes)) {
      evicted[n_evicted++] = g_own_cache[0];
      own_cache_remove_at(0);
    }
    std::uint32_t now = coarse_clock_ms();
    note_cached(now);
    g_own_cache[g_own_count++] = {base, bytes, now};
    g_own_bytes += bytes;
  } else {
    evicted[n_evicted++] = {base, bytes, 0};
  }
  pthread_mutex_unlock(&g_lock);
  for (std::size_t i = 0; i < n_evicted; ++i) unmap(evicted[i].base, evicted[i].bytes);
}

// Discards what has stayed in the cache purge_delay_ms() by `now`: in the
// regions, each run of such free segments in one system call; mappings of
// their own are unmapped (returned in `expired`, for after the lock). Sets
// the clock of what is left. Under g_lock.
std::size_t purge_expired(std::uint32_t now, OwnMapping* expired) noexcept {
  std::uint32_t delay = purge_delay_ms();
  bool left = false;
  std::uint32_t oldest_left = now;
  auto keep = [&](std::uint32_t freed) {
    if (!left || static_cast<std::int32_t>(freed - oldest_left) < 0) oldest_left = freed;
    left = true;
  };
  for (std::size_t k = 0; k < g_region_count; ++k) {
    Region& r = g_regions[k];
    for (std::size_t i = 0; i < r.segments;) {
      if (is_used(r, i) || !r.resident[i]) {
        ++i;
        continue;
      }
      if (now - r.freed_ms[i] < delay) {
        keep(r.freed_ms[i]);
        ++i;
        continue;
      }
      // A run of expired free segments: the resident prefix of each, up to
      // the last one's, goes in one call.
      std::size_t at = i;
      std::size_t bytes = 0;
      for (; i < r.segments && !is_used(r, i) && r.resident[i] && now - r.freed_ms[i] >= delay; ++i) {
        bytes = (i - at) * kSegment + r.resident[i];
        g_cached_bytes -= r.resident[i];
        r.resident[i] = 0;
      }
      discard_by_remapping(r.base + at * kSegment, bytes);
      g_discarded_bytes += bytes;
    }
  }
  std::size_t n_expired = 0;
  for (std::size_t i = 0; i < g_own_count;) {
    if (now - g_own_cache[i].freed_ms >= delay) {
      expired[n_expired++] = g_own_cache[i];
      own_cache_remove_at(i);
    } else {
      keep(g_own_cache[i].freed_ms);
      ++i;
    }
  }
  g_cache_oldest_ms.store(oldest_left, std::memory_order_relaxed);
  g_cache_waiting.store(left, std::memory_order_relaxed);
  return n_expired;
}

void purge_if_due() noexcept;

// The object starts kHugeHeader rounded up to its alignment (a power of two)
// from its header, or a segment from it (giant alignment).
bool at_object_start(const HugeHeader* header, const void* p) noexcept {
  auto offset = static_cast<std::size_t>(static_cast<const char*>(p) - reinterpret_cast<const char*>(header));
  if constexpr (cfg::kGuardPages) return offset == header->object_offset;  // right-aligned: the header says where
  return offset >= kHugeHeader && offset <= kSegment && (offset & (offset - 1)) == 0;
}

}  // namespace

bool huge_freed_and_cached(const void* p) noexcept {
  const HugeHeader* header = header_of(p);
  bool cached = false;
  pthread_mutex_lock(&g_lock);  // the entry cannot be handed out or unmapped meanwhile
  for (std::size_t i = 0; i < g_own_count && !cached; ++i) cached = g_own_cache[i].base == header;
  // huge_free left kind 0; the object's offset in its mapping is still written there.
  cached = cached && header->segment.kind == SegmentKind{0} && header->segment.map_base == header &&
           at_object_start(header, p);
  pthread_mutex_unlock(&g_lock);
  return cached;
}

namespace {

// Unmaps every cached mapping of its own; false if there was none.
bool flush_own_cache() noexcept {
  OwnMapping flushed[kOwnCacheEntries];
  pthread_mutex_lock(&g_lock);
  std::size_t n = g_own_count;
  for (std::size_t i = 0; i < n; ++i) flushed[i] = g_own_cache[i];
  g_own_count = 0;
  g_own_bytes = 0;
  pthread_mutex_unlock(&g_lock);
  for (std::size_t i = 0; i < n; ++i) unmap(flushed[i].base, flushed[i].bytes);
  return n > 0;
}

HugeHeader* map_own(std::size_t bytes, std::size_t align, bool giant_align, bool* zeroed) noexcept {
  std::size_t got = bytes;
  void* base = giant_align ? nullptr : take_own_cached(bytes, &got);
  *zeroed = base == nullptr;
  if (!base) base = giant_align ? map_aligned(bytes, align, kSegment) : map_aligned(bytes, kSegment);
  if (!base && flush_own_cache()) {  // out of address space: what the cache holds goes first
    base = giant_align ? map_aligned(bytes, align, kSegment) : map_aligned(bytes, kSegment);
  }
  if (!base) return nullptr;
  auto* header = new (base) HugeHeader{};
  header->run_bytes = got;
  header->region = kNoRegion;
  return header;
}

}  // namespace

void* huge_malloc(std::size_t size, std::size_t align, bool* zeroed) noexcept {
  purge_if_due();
  if (size > (std::size_t{1} << 46) || align > (std::size_t{1} << 40)) {
    errno = ENOMEM;
    return nullptr;
  }
  // Where the object starts: after the header, at its alignment; an alignment
  // of a whole segment or more puts the header one segment before the object.
  bool giant_align = align >= kSegment;
  std::size_t offset = giant_align ? kSegment : (kHugeHeader + align - 1) & ~(align - 1);
  std::size_t bytes = round_to_os_page(offset + size);
  // Right-aligned against the guard page, as far as the alignment allows:
  // an overflow of the object runs into the guard at once.
  if (cfg::kGuardPages && !giant_align) offset = (bytes - size) & ~(align - 1);
  HugeHeader* header = nullptr;
  if (!giant_align && bytes <= cfg::kHugeRegionObjectMax) header = place_in_region(bytes, zeroed);
  if (!header) {
    header = map_own(bytes + kGuard, align, giant_align, zeroed);
    if (!header) {
      errno = ENOMEM;
      return nullptr;
    }
  }
  if (!area_add(header)) {  // checked mode must recognise the object
    huge_free(reinterpret_cast<char*>(header) + kHugeHeader);
    errno = ENOMEM;
    return nullptr;
  }
  header->segment.kind = SegmentKind::kHuge;
  header->segment.map_base = header;
  header->segment.mapped_bytes = bytes;
  header->touched_bytes = bytes;
  header->object_offset = offset;
  header->erase_on_free = mapped_by_glibc_now(bytes);
  guard_object(header);
  g_live_objects.fetch_add(1, std::memory_order_relaxed);
  g_live_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return reinterpret_cast<char*>(header) + offset;
}

void huge_free(void* p) noexcept {
  purge_if_due();
  HugeHeader* header = header_of(p);
  std::size_t bytes = header->segment.mapped_bytes;
  STRATA_ASSERT(header->touched_bytes <= header->run_bytes && bytes <= header->run_bytes);
  if (header->segment.kind == SegmentKind::kHuge) unguard_object(header);
  if (header->segment.kind == SegmentKind::kHuge) {
    g_live_objects.fetch_sub(1, std::memory_order_relaxed);
    g_live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  }
  header->segment.kind = SegmentKind{0};  // a second free of p is seen in checked mode
  // (first_free_of_its_size raises the threshold, as glibc's free of a mapped chunk does.)
  // The erased run still counts as cached: an overcount that keeps the cache
  // under its bound (docs/benchmarks-malloc.md, issue 34, eighth part).
  if (first_free_of_its_size(bytes) || header->erase_on_free)
    discard(p, bytes - static_cast<std::size_t>(static_cast<char*>(p) - reinterpret_cast<char*>(header)));
  area_remove(header);
  if (header->region == kNoRegion) {
    if (reinterpret_cast<char*>(p) - reinterpret_cast<char*>(header) < static_cast<std::ptrdiff_t>(kSegment)) {
      cache_or_unmap_own(header, header->run_bytes);
    } else {
      unmap(header, header->run_bytes);  // giant alignment: rare, not cached
    }
    return;
  }
  pthread_mutex_lock(&g_lock);
  give_segments(g_regions[header->region], first_segment(header), header->run_bytes / kSegment, header->touched_bytes);
  trim_cache();
  pthread_mutex_unlock(&g_lock);
}

void huge_check_live(const void* p, Use use) noexcept {
  const HugeHeader* header = header_of(p);
  if (!area_contains(header) || header->segment.kind != SegmentKind::kHuge) {
    // huge_free leaves kind 0 in a header whose memory stays (region runs, the cache).
    if (header->segment.kind == SegmentKind{0} && header->segment.map_base == header) report_freed(use, p);
    report_invalid(use, p);
  }
  if (!at_object_start(header, p)) report_invalid(use, p);
}

std::size_t huge_usable_size(const void* p) noexcept {
  const HugeHeader* header = header_of(p);
  return static_cast<std::size_t>(static_cast<const char*>(header->segment.map_base) + header->segment.mapped_bytes -
                                  static_cast<const char*>(p));
}

namespace {

// Region objects: within the run, only the numbers change; a shrink gives the
// whole segments behind the new end to the cache; growth takes the free
// segments behind the run, if there are enough.
bool resize_in_region(HugeHeader* header, std::size_t bytes) noexcept {
  std::size_t n_old = header->run_bytes / kSegment;
  std::size_t n_new = segments_for(bytes + kGuard);
  if (n_new == n_old && bytes <= header->touched_bytes) return true;
  Region& r = g_regions[header->region];
  std::size_t first = first_segment(header);
  pthread_mutex_lock(&g_lock);
  bool ok = true;
  if (n_new == n_old) {  // growth within the run: cached pages fill what was never touched
    fill_gaps(header->region, first, n_new, header->touched_bytes, bytes);
  } else if (n_new < n_old) {
    give_segments(r, first + n_new, n_old - n_new,
                  header->touched_bytes > n_new * kSegment ? header->touched_bytes - n_new * kSegment : 0);
    trim_cache();
    if (header->touched_bytes > n_new * kSegment) header->touched_bytes = n_new * kSegment;
  } else {
    for (std::size_t i = first + n_old; ok && i < first + n_new; ++i) ok = i < r.segments && !is_used(r, i);
    if (ok) {
      std::size_t reused = take_segments(r, first + n_old, n_new - n_old, 0, bytes - n_old * kSegment, nullptr);
      fill_gaps(header->region, first, n_new, header->touched_bytes, bytes);
      g_reused_bytes.fetch_add(reused, std::memory_order_relaxed);
      ++g_grown_in_place;
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (ok) header->run_bytes = n_new * kSegment;
  return ok;
}

// Own mappings: a shrink to less than half unmaps the tail; growth asks the
// kernel to extend the mapping where it is.
bool resize_own(HugeHeader* header, std::size_t bytes) noexcept {
  std::size_t old_bytes = header->run_bytes;
  if (bytes <= old_bytes) {
    if (bytes < old_bytes / 2) {
      unmap(reinterpret_cast<char*>(header) + bytes, old_bytes - bytes);
      header->run_bytes = bytes;
    }
    return true;
  }
  if (!grow_in_place(header, old_bytes, bytes)) return false;
  header->run_bytes = bytes;
  return true;
}

}  // namespace

bool huge_resize(void* p, std::size_t size) noexcept {
  HugeHeader* header = header_of(p);
  auto* base = reinterpret_cast<char*>(header);
  std::size_t offset = static_cast<std::size_t>(static_cast<char*>(p) - base);
  std::size_t bytes = round_to_os_page(offset + size);
  if (bytes == header->segment.mapped_bytes) return true;
  unguard_object(header);
  bool ok = header->region == kNoRegion ? resize_own(header, bytes + kGuard) : resize_in_region(header, bytes);
  if (ok) {
    g_live_bytes.fetch_add(bytes - header->segment.mapped_bytes, std::memory_order_relaxed);  // wraps down on a shrink
    header->segment.mapped_bytes = bytes;
    if (bytes > header->touched_bytes) header->touched_bytes = bytes;
  }
  guard_object(header);
  return ok;
}

namespace {

// A region object that cannot grow where it is: a new run (reusing resident
// pages where the moved ones do not go), the old pages moved there by the
// kernel instead of copied, the old run given back with fresh pages.
void* move_in_region(HugeHeader* header, std::size_t offset, std::size_t bytes) noexcept {
  if (bytes > cfg::kHugeRegionObjectMax) return nullptr;  // the caller copies it into a mapping of its own
  std::size_t moved = header->touched_bytes;  // nothing beyond was ever handed out
  std::size_t n = segments_for(bytes + kGuard);
  std::size_t k = 0, first = 0;
  pthread_mutex_lock(&g_lock);
  bool found = find_place(n, moved, bytes, &k, &first);
  if (!found && add_region()) found = find_place(n, moved, bytes, &k, &first);
  if (found) {
    std::size_t reused = take_segments(g_regions[k], first, n, moved, bytes, nullptr);
    fill_gaps(k, first, n, moved, bytes);
    g_reused_bytes.fetch_add(reused, std::memory_order_relaxed);
  }
  bool may_move = found && may_move_pages();
  pthread_mutex_unlock(&g_lock);
  if (!found) return nullptr;
  auto* from = reinterpret_cast<char*>(header);
  char* to = g_regions[k].base + first * kSegment;
  Region& old_region = g_regions[header->region];
  std::size_t old_first = first_segment(header), old_n = header->run_bytes / kSegment;
  MoveResult result = may_move ? move_within_reservation(from, moved, to) : MoveResult::kNotMoved;
  if (result == MoveResult::kNotMoved) {
    std::memcpy(to, from, moved);  // too many mappings, or the run spans two of them
  } else {
    g_moved_bytes.fetch_add(moved, std::memory_order_relaxed);
  }
  area_remove(from);
  area_add(to);  // cannot fail: the area map exists since the first huge object
  auto* h = reinterpret_cast<HugeHeader*>(to);
  g_live_bytes.fetch_add(bytes - h->segment.mapped_bytes, std::memory_order_relaxed);
  h->segment.map_base = to;
  h->segment.mapped_bytes = bytes;
  h->run_bytes = n * kSegment;
  h->touched_bytes = bytes;
  h->region = static_cast<std::uint32_t>(k);
  pthread_mutex_lock(&g_lock);
  if (result == MoveResult::kMoved) {
    give_moved_segments(old_region, old_first, old_n, moved);
  } else if (result == MoveResult::kNotMoved) {
    give_segments(old_region, old_first, old_n, moved);
  }  // else a hole another mapping took: its segments stay marked used, never handed out
  trim_cache();
  pthread_mutex_unlock(&g_lock);
  return to + offset;
}

// An object with a mapping of its own, to a new aligned mapping.
void* move_own(HugeHeader* header, std::size_t offset, std::size_t size) noexcept {
  void* old_base = header;
  std::size_t old_bytes = header->run_bytes;
  std::size_t bytes = round_to_os_page(offset + size);
  void* target = map_aligned(bytes + kGuard, kSegment);
  if (!target) return nullptr;
  if (!area_add(target) || !move_pages(old_base, old_bytes, old_bytes, target)) {
    area_remove(target);
    unmap(target, bytes + kGuard);
    return nullptr;
  }
  area_remove(old_base);
  g_moved_bytes.fetch_add(old_bytes, std::memory_order_relaxed);
  auto* moved = static_cast<HugeHeader*>(target);
  g_live_bytes.fetch_add(bytes - moved->segment.mapped_bytes, std::memory_order_relaxed);
  moved->segment.map_base = target;
  moved->segment.mapped_bytes = bytes;
  moved->run_bytes = bytes + kGuard;
  moved->touched_bytes = bytes;
  return static_cast<char*>(target) + offset;
}

}  // namespace

// Region objects move to a new run; objects with a mapping of their own to a
// new aligned mapping. Either way the kernel moves the pages.
void* huge_move(void* p, std::size_t size) noexcept {
  HugeHeader* header = header_of(p);
  std::size_t offset = static_cast<std::size_t>(static_cast<char*>(p) - reinterpret_cast<char*>(header));
  if (size > (std::size_t{1} << 46) || (header->region == kNoRegion && offset >= kSegment))
    return nullptr;  // giant alignment: copy instead
  unguard_object(header);  // the kernel moves one read-write mapping
  void* moved = header->region != kNoRegion ? move_in_region(header, offset, round_to_os_page(offset + size))
                                            : move_own(header, offset, size);
  guard_object(moved ? header_of(moved) : header);
  return moved;
}

HugeStats huge_stats() noexcept {
  HugeStats s;
  s.live_objects = g_live_objects.load(std::memory_order_relaxed);
  s.live_bytes = g_live_bytes.load(std::memory_order_relaxed);
  pthread_mutex_lock(&g_lock);
  s.cached_bytes = g_cached_bytes + g_own_bytes;
  for (std::size_t k = 0; k < g_region_count; ++k) {
    const Region& r = g_regions[k];
    for (std::size_t i = 0; i < r.segments; ++i)  // runs of free segments holding resident pages
      if (!is_used(r, i) && r.resident[i] && (i == 0 || is_used(r, i - 1) || !r.resident[i - 1])) ++s.cache_entries;
  }
  s.cache_entries += g_own_count;
  s.reserved_bytes = g_reserved_bytes;
  s.discarded_bytes = g_discarded_bytes;
  s.grown_in_place = g_grown_in_place;
  s.fresh_bytes = g_fresh_bytes;
  pthread_mutex_unlock(&g_lock);
  s.reused_bytes = g_reused_bytes.load(std::memory_order_relaxed);
  s.moved_bytes = g_moved_bytes.load(std::memory_order_relaxed);
  return s;
}

bool huge_purge_due(std::uint32_t now) noexcept {
  return g_cache_waiting.load(std::memory_order_acquire) &&
         now - g_cache_oldest_ms.load(std::memory_order_relaxed) >= purge_delay_ms();
}

void huge_purge_expired(std::uint32_t now) noexcept {
  OwnMapping expired[kOwnCacheEntries];
  // Another thread at it, or a huge malloc or free under way: it can wait for the next check.
  if (pthread_mutex_trylock(&g_lock) != 0) return;
  std::size_t n = purge_expired(now, expired);
  pthread_mutex_unlock(&g_lock);
  for (std::size_t i = 0; i < n; ++i) unmap(expired[i].base, expired[i].bytes);
}

namespace {
void purge_if_due() noexcept {
  std::uint32_t now = coarse_clock_ms();
  if (huge_purge_due(now)) huge_purge_expired(now);
}
}  // namespace

void huge_discard_cache() noexcept {
  pthread_mutex_lock(&g_lock);
  trim_cache(0);
  pthread_mutex_unlock(&g_lock);
  flush_own_cache();
}

void huge_lock() noexcept { pthread_mutex_lock(&g_lock); }
void huge_unlock() noexcept { pthread_mutex_unlock(&g_lock); }

}  // namespace strata::malloc_detail
