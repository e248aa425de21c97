#include "huge_heap.hpp"

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <new>

#include "config.hpp"
#include "os.hpp"
#include "segment.hpp"

namespace strata::malloc_detail {

namespace {

constexpr std::size_t kHugeHeader = 64;  // the object starts here unless it needs more alignment

// A run of resident pages kept for reuse: a freed mapping or a piece of one
// (a trimmed tail, what is left after a prefix was moved away), joined with
// its cached neighbours. No area bit is set inside the cache.
struct CachedMapping {
  void* base;
  std::size_t bytes;
};

pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
CachedMapping g_cache[cfg::kHugeCacheEntries];  // oldest first
std::size_t g_cache_count = 0;
std::size_t g_cache_bytes = 0;
std::atomic<std::size_t> g_live_objects{0};
std::atomic<std::size_t> g_live_bytes{0};
std::atomic<std::size_t> g_reused_bytes{0};  // handed out again from the cache
std::atomic<std::size_t> g_moved_bytes{0};   // of which moved by the kernel (mremap), and realloc moves

std::size_t round_to_os_page(std::size_t n) noexcept { return (n + cfg::kOsPageSize - 1) & ~(cfg::kOsPageSize - 1); }
bool segment_aligned(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p) % cfg::kSegmentSize == 0; }

// Below, the caller holds g_cache_lock.
void cache_remove_at(std::size_t i) noexcept {
  g_cache_bytes -= g_cache[i].bytes;
  for (std::size_t j = i + 1; j < g_cache_count; ++j) g_cache[j - 1] = g_cache[j];
  --g_cache_count;
}

// Pieces smaller than this are not worth an entry (nor a system call).
constexpr std::size_t kMinPiece = 16 * cfg::kOsPageSize;

// Takes the first `want` bytes of cached piece i; the piece keeps the rest,
// unless that would be a sliver (< kMinPiece): then the whole piece goes.
// Returns the bytes taken: `want`, or the whole piece (more or less than it).
std::size_t take_prefix(std::size_t i, std::size_t want) noexcept {
  CachedMapping& m = g_cache[i];
  if (m.bytes > want && m.bytes - want >= kMinPiece) {
    m.base = static_cast<char*>(m.base) + want;
    m.bytes -= want;
    g_cache_bytes -= want;
    return want;
  }
  std::size_t all = m.bytes;
  cache_remove_at(i);
  return all;
}

std::uintptr_t align_up_to_segment(const void* p) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) + cfg::kSegmentSize - 1) & ~(cfg::kSegmentSize - 1);
}

// A run of `bytes` at a segment-aligned address inside the smallest cached
// run that has one: the object's header can live there and no page moves.
// The run's parts before and behind stay in the cache as pieces of their own
// (a sliver behind goes with the object).
void* take_cached(std::size_t bytes, std::size_t& got) noexcept {
  char* found = nullptr;
  void* sliver_before = nullptr;
  std::size_t sliver_bytes = 0;
  pthread_mutex_lock(&g_cache_lock);
  std::size_t best = g_cache_count;
  for (std::size_t i = 0; i < g_cache_count; ++i) {
    std::uintptr_t start = align_up_to_segment(g_cache[i].base);
    std::uintptr_t end = reinterpret_cast<std::uintptr_t>(g_cache[i].base) + g_cache[i].bytes;
    if (start + bytes <= end && (best == g_cache_count || g_cache[i].bytes < g_cache[best].bytes)) best = i;
  }
  if (best < g_cache_count) {
    CachedMapping run = g_cache[best];
    cache_remove_at(best);
    found = reinterpret_cast<char*>(align_up_to_segment(run.base));
    std::size_t before = static_cast<std::size_t>(found - static_cast<char*>(run.base));
    std::size_t behind = run.bytes - before - bytes;
    got = behind >= kMinPiece ? bytes : bytes + behind;
    if (behind >= kMinPiece) {  // a slot is free: this run's own
      g_cache[g_cache_count++] = {found + bytes, behind};
      g_cache_bytes += behind;
    }
    if (before > 0) {
      if (g_cache_count < cfg::kHugeCacheEntries) {
        g_cache[g_cache_count++] = {run.base, before};
        g_cache_bytes += before;
      } else {
        sliver_before = run.base;
        sliver_bytes = before;
      }
    }
  }
  pthread_mutex_unlock(&g_cache_lock);
  if (sliver_before) unmap(sliver_before, sliver_bytes);
  if (found) {
    area_add(found);  // a header lives here again
    g_reused_bytes.fetch_add(got, std::memory_order_relaxed);
  }
  return found;
}

// Fill the untouched range [dest, dest+bytes) of a mapping with cached
// resident pages, moved there by the kernel (mremap): the page faults and the
// zeroing a fresh range would cost are saved. Pieces are taken best-fit
// (smallest one that covers what is left, else the largest); a bigger piece
// gives its prefix. Returns the bytes filled (the rest stays fresh).
std::size_t fill_from_cache(char* dest, std::size_t bytes) noexcept {
  struct Move {
    char* from;
    std::size_t bytes;
  };
  Move moves[cfg::kHugeCacheEntries];
  std::size_t n_moves = 0;
  std::size_t planned = 0;
  pthread_mutex_lock(&g_cache_lock);
  while (planned < bytes && g_cache_count > 0 && n_moves < cfg::kHugeCacheEntries) {
    std::size_t want = bytes - planned;
    std::size_t pick = g_cache_count;
    std::size_t largest = 0;
    for (std::size_t i = 0; i < g_cache_count; ++i) {
      if (g_cache[i].bytes >= want && (pick == g_cache_count || g_cache[i].bytes < g_cache[pick].bytes)) pick = i;
      if (g_cache[i].bytes > g_cache[largest].bytes) largest = i;
    }
    if (pick == g_cache_count) pick = largest;
    auto* from = static_cast<char*>(g_cache[pick].base);
    std::size_t taken = take_prefix(pick, want);
    std::size_t used = taken < want ? taken : want;
    if (taken > used) unmap(from + used, taken - used);  // a sliver: not worth keeping
    moves[n_moves++] = {from, used};
    planned += used;
  }
  pthread_mutex_unlock(&g_cache_lock);
  std::size_t filled = 0;
  for (std::size_t i = 0; i < n_moves; ++i) {
    if (move_pages(moves[i].from, moves[i].bytes, moves[i].bytes, dest + filled)) {
      g_reused_bytes.fetch_add(moves[i].bytes, std::memory_order_relaxed);
      g_moved_bytes.fetch_add(moves[i].bytes, std::memory_order_relaxed);
    } else {
      unmap(moves[i].from, moves[i].bytes);  // the destination stays fresh there
    }
    filled += moves[i].bytes;
  }
  return filled;
}

// The entry to evict when the cache is full: the oldest, unless the table of
// entries (not the bytes) is what is full; then the smallest, so that a few
// slivers do not push a big run out.
std::size_t victim(bool table_full) noexcept {
  if (!table_full) return 0;
  std::size_t smallest = 0;
  for (std::size_t i = 1; i < g_cache_count; ++i)
    if (g_cache[i].bytes < g_cache[smallest].bytes) smallest = i;
  return smallest;
}

// Joins [base, base+bytes) with a cached piece that ends where it starts or
// starts where it ends (mappings are placed next to each other, and a freed
// object often meets its own trimmed tail). Returns true if it was joined.
bool join_neighbour(void* base, std::size_t bytes) noexcept {
  auto* start = static_cast<char*>(base);
  for (std::size_t i = 0; i < g_cache_count; ++i) {
    auto* other = static_cast<char*>(g_cache[i].base);
    if (other + g_cache[i].bytes == start) {
      g_cache[i].bytes += bytes;
    } else if (start + bytes == other) {
      g_cache[i].base = start;
      g_cache[i].bytes += bytes;
    } else {
      continue;
    }
    g_cache_bytes += bytes;
    return true;
  }
  return false;
}

// Keep freed pages for reuse, evicting what does not fit; unmap the evicted.
void cache_or_unmap(void* base, std::size_t bytes) noexcept {
  CachedMapping evicted[cfg::kHugeCacheEntries + 1];
  std::size_t n_evicted = 0;
  // Cached pages hold no header: checked mode must not take them for a
  // segment (a run reused in place is added again).
  if (segment_aligned(base)) area_remove(base);
  pthread_mutex_lock(&g_cache_lock);
  if (bytes <= cfg::kHugeCacheBytes / 2) {
    while (g_cache_count && g_cache_bytes + bytes > cfg::kHugeCacheBytes) {
      std::size_t v = victim(false);
      evicted[n_evicted++] = g_cache[v];
      cache_remove_at(v);
    }
    if (!join_neighbour(base, bytes)) {
      if (g_cache_count == cfg::kHugeCacheEntries) {
        std::size_t v = victim(true);
        evicted[n_evicted++] = g_cache[v];
        cache_remove_at(v);
      }
      g_cache[g_cache_count++] = {base, bytes};
      g_cache_bytes += bytes;
    }
  } else {
    evicted[n_evicted++] = {base, bytes};
  }
  pthread_mutex_unlock(&g_cache_lock);
  for (std::size_t i = 0; i < n_evicted; ++i) {
    unmap(evicted[i].base, evicted[i].bytes);
  }
}

SegmentHeader* header_of(const void* p) noexcept { return segment_of(p); }

}  // namespace

void* huge_malloc(std::size_t size, std::size_t align, bool* zeroed) noexcept {
  if (size > (std::size_t{1} << 46) || align > (std::size_t{1} << 40)) {
    errno = ENOMEM;
    return nullptr;
  }
  // Where the object starts: after the header, at its alignment; an alignment
  // of a whole segment or more puts the header one segment before the object.
  bool giant_align = align >= cfg::kSegmentSize;
  std::size_t offset = giant_align ? cfg::kSegmentSize : (kHugeHeader + align - 1) & ~(align - 1);
  std::size_t bytes = round_to_os_page(offset + size);
  std::size_t got = bytes;
  bool cacheable = !giant_align && offset == kHugeHeader;
  void* base = cacheable ? take_cached(bytes, got) : nullptr;
  *zeroed = base == nullptr;
  if (!base) {
    base = giant_align ? map_aligned(bytes, align, cfg::kSegmentSize) : map_aligned(bytes, cfg::kSegmentSize);
    if (!base) return nullptr;
    if (!area_add(base)) {
      unmap(base, bytes);
      errno = ENOMEM;
      return nullptr;
    }
    // No cached run fits where it is: assemble the new mapping from cached
    // pieces instead (giant alignments keep fresh memory: rare).
    if (cacheable && fill_from_cache(static_cast<char*>(base), bytes) > 0) *zeroed = false;
  }
  auto* header = new (base) SegmentHeader{};
  header->kind = SegmentKind::kHuge;
  header->map_base = base;
  header->mapped_bytes = got;
  g_live_objects.fetch_add(1, std::memory_order_relaxed);
  g_live_bytes.fetch_add(got, std::memory_order_relaxed);
  return static_cast<char*>(base) + offset;
}

void huge_free(void* p) noexcept {
  SegmentHeader* header = header_of(p);
  void* base = header->map_base;
  std::size_t bytes = header->mapped_bytes;
  g_live_objects.fetch_sub(1, std::memory_order_relaxed);
  g_live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  header->kind = SegmentKind{0};  // a second free of p is seen in checked mode
  cache_or_unmap(base, bytes);
}

std::size_t huge_usable_size(const void* p) noexcept {
  const SegmentHeader* header = header_of(p);
  return static_cast<std::size_t>(static_cast<const char*>(header->map_base) + header->mapped_bytes -
                                  static_cast<const char*>(p));
}

// Takes the cached piece that starts right at `end`, if there is one, and
// returns its size (0 if none): the mapping before it grows into its pages.
std::size_t take_adjacent(char* end, std::size_t at_most) noexcept {
  std::size_t got = 0;
  pthread_mutex_lock(&g_cache_lock);
  for (std::size_t i = 0; i < g_cache_count; ++i) {
    if (g_cache[i].base == end) {
      got = take_prefix(i, at_most);
      break;
    }
  }
  pthread_mutex_unlock(&g_cache_lock);
  return got;
}

bool huge_resize(void* p, std::size_t size) noexcept {
  SegmentHeader* header = header_of(p);
  char* base = static_cast<char*>(header->map_base);
  std::size_t offset = static_cast<std::size_t>(static_cast<char*>(p) - base);
  std::size_t bytes = round_to_os_page(offset + size);
  if (bytes <= header->mapped_bytes) {
    // Shrink: keep the tail (resident, ready to grow into again) unless more
    // than half of the mapping would be unused; then the tail goes to the
    // cache, as resident pages for the next huge request.
    if (bytes < header->mapped_bytes / 2) {
      g_live_bytes.fetch_sub(header->mapped_bytes - bytes, std::memory_order_relaxed);
      cache_or_unmap(base + bytes, header->mapped_bytes - bytes);
      header->mapped_bytes = bytes;
    }
    return true;
  }
  std::size_t old_bytes = header->mapped_bytes;
  // A cached piece right behind the mapping (often its own trimmed tail).
  std::size_t adjacent = take_adjacent(base + old_bytes, bytes - old_bytes);
  if (adjacent) {
    g_reused_bytes.fetch_add(adjacent, std::memory_order_relaxed);
    g_live_bytes.fetch_add(adjacent, std::memory_order_relaxed);
    header->mapped_bytes = old_bytes + adjacent;
    if (header->mapped_bytes >= bytes) return true;
    old_bytes = header->mapped_bytes;
  }
  if (!grow_in_place(base, old_bytes, bytes)) return false;
  fill_from_cache(base + old_bytes, bytes - old_bytes);
  g_live_bytes.fetch_add(bytes - old_bytes, std::memory_order_relaxed);
  header->mapped_bytes = bytes;
  return true;
}

// The old pages are moved (same size: the kernel moves a range made of
// several pieces too), then the new tail is filled from the cache.
void* huge_move(void* p, std::size_t size) noexcept {
  SegmentHeader* header = header_of(p);
  void* old_base = header->map_base;
  std::size_t old_bytes = header->mapped_bytes;
  std::size_t offset = static_cast<std::size_t>(static_cast<char*>(p) - static_cast<char*>(old_base));
  if (offset >= cfg::kSegmentSize || size > (std::size_t{1} << 46)) return nullptr;  // giant alignment: copy instead
  std::size_t bytes = round_to_os_page(offset + size);
  void* target = map_aligned(bytes, cfg::kSegmentSize);
  if (!target) return nullptr;
  if (!area_add(target) || !move_pages(old_base, old_bytes, old_bytes, target)) {
    area_remove(target);
    unmap(target, bytes);
    return nullptr;
  }
  area_remove(old_base);
  g_moved_bytes.fetch_add(old_bytes, std::memory_order_relaxed);
  fill_from_cache(static_cast<char*>(target) + old_bytes, bytes - old_bytes);
  g_live_bytes.fetch_add(bytes - old_bytes, std::memory_order_relaxed);
  auto* moved = static_cast<SegmentHeader*>(target);
  moved->map_base = target;
  moved->mapped_bytes = bytes;
  return static_cast<char*>(target) + offset;
}

HugeStats huge_stats() noexcept {
  HugeStats s;
  s.live_objects = g_live_objects.load(std::memory_order_relaxed);
  s.live_bytes = g_live_bytes.load(std::memory_order_relaxed);
  pthread_mutex_lock(&g_cache_lock);
  s.cached_bytes = g_cache_bytes;
  s.cache_entries = g_cache_count;
  pthread_mutex_unlock(&g_cache_lock);
  s.reused_bytes = g_reused_bytes.load(std::memory_order_relaxed);
  s.moved_bytes = g_moved_bytes.load(std::memory_order_relaxed);
  return s;
}

void huge_lock() noexcept { pthread_mutex_lock(&g_cache_lock); }
void huge_unlock() noexcept { pthread_mutex_unlock(&g_cache_lock); }

}  // namespace strata::malloc_detail
