#include "huge_heap.hpp"

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <new>

#include "config.hpp"
#include "os.hpp"
#include "segment.hpp"

namespace strata::malloc_detail {

namespace {

constexpr std::size_t kHugeHeader = 64;  // the object starts here unless it needs more alignment

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

std::size_t round_to_os_page(std::size_t n) noexcept { return (n + cfg::kOsPageSize - 1) & ~(cfg::kOsPageSize - 1); }

// The smallest cached mapping of at least `bytes`. What it has beyond `bytes`
// is unmapped if that is more than three quarters of it (a bound on the
// resident memory wasted; reusing a bigger mapping as it is saves the page
// faults that trimming and growing again would cost).
void* take_cached(std::size_t bytes, std::size_t& got) noexcept {
  void* found = nullptr;
  pthread_mutex_lock(&g_cache_lock);
  std::size_t best = g_cache_count;
  for (std::size_t i = 0; i < g_cache_count; ++i)
    if (g_cache[i].bytes >= bytes && (best == g_cache_count || g_cache[i].bytes < g_cache[best].bytes)) best = i;
  if (best < g_cache_count) {
    found = g_cache[best].base;
    got = g_cache[best].bytes;
    g_cache_bytes -= got;
    for (std::size_t j = best + 1; j < g_cache_count; ++j) g_cache[j - 1] = g_cache[j];
    --g_cache_count;
  }
  pthread_mutex_unlock(&g_cache_lock);
  if (found && got - bytes > got / 4 * 3) {
    unmap(static_cast<char*>(found) + bytes, got - bytes);
    got = bytes;
  }
  return found;
}

// The largest cached mapping (all are smaller than `bytes` when this is
// asked), its pages moved by the kernel to a new place of `bytes`: only the
// difference is fresh memory that will fault in.
void* take_cached_and_grow(std::size_t bytes) noexcept {
  pthread_mutex_lock(&g_cache_lock);
  if (g_cache_count == 0) {
    pthread_mutex_unlock(&g_cache_lock);
    return nullptr;
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < g_cache_count; ++i)
    if (g_cache[i].bytes > g_cache[best].bytes) best = i;
  CachedMapping m = g_cache[best];
  g_cache_bytes -= m.bytes;
  for (std::size_t j = best + 1; j < g_cache_count; ++j) g_cache[j - 1] = g_cache[j];
  --g_cache_count;
  pthread_mutex_unlock(&g_cache_lock);
  if (grow_in_place(m.base, m.bytes, bytes)) return m.base;
  void* target = map_aligned(bytes, cfg::kSegmentSize);
  if (target && area_add(target) && move_pages(m.base, m.bytes, bytes, target)) {
    area_remove(m.base);
    return target;
  }
  if (target) unmap(target, bytes);
  area_remove(m.base);
  unmap(m.base, m.bytes);
  return nullptr;
}

// Keep a freed mapping for reuse, evicting the oldest; unmap what does not fit.
void cache_or_unmap(void* base, std::size_t bytes) noexcept {
  CachedMapping evicted[cfg::kHugeCacheEntries + 1];
  std::size_t n_evicted = 0;
  pthread_mutex_lock(&g_cache_lock);
  if (bytes <= cfg::kHugeCacheBytes / 2) {
    while (g_cache_count && (g_cache_count == cfg::kHugeCacheEntries || g_cache_bytes + bytes > cfg::kHugeCacheBytes)) {
      evicted[n_evicted++] = g_cache[0];
      g_cache_bytes -= g_cache[0].bytes;
      for (std::size_t j = 1; j < g_cache_count; ++j) g_cache[j - 1] = g_cache[j];
      --g_cache_count;
    }
    g_cache[g_cache_count++] = {base, bytes};
    g_cache_bytes += bytes;
  } else {
    evicted[n_evicted++] = {base, bytes};
  }
  pthread_mutex_unlock(&g_cache_lock);
  for (std::size_t i = 0; i < n_evicted; ++i) {
    area_remove(evicted[i].base);
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
  if (!base && cacheable) base = take_cached_and_grow(bytes);
  *zeroed = base == nullptr;
  if (!base) {
    base = giant_align ? map_aligned(bytes, align, cfg::kSegmentSize) : map_aligned(bytes, cfg::kSegmentSize);
    if (!base) return nullptr;
    if (!area_add(base)) {
      unmap(base, bytes);
      errno = ENOMEM;
      return nullptr;
    }
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

bool huge_resize(void* p, std::size_t size) noexcept {
  SegmentHeader* header = header_of(p);
  std::size_t offset = static_cast<std::size_t>(static_cast<char*>(p) - static_cast<char*>(header->map_base));
  std::size_t bytes = round_to_os_page(offset + size);
  if (bytes <= header->mapped_bytes) {
    // Shrink: keep the tail (resident, ready to grow into again) unless more
    // half of the mapping would be unused.
    if (bytes < header->mapped_bytes / 2) {
      unmap(static_cast<char*>(header->map_base) + bytes, header->mapped_bytes - bytes);
      g_live_bytes.fetch_sub(header->mapped_bytes - bytes, std::memory_order_relaxed);
      header->mapped_bytes = bytes;
    }
    return true;
  }
  if (!grow_in_place(header->map_base, header->mapped_bytes, bytes)) return false;
  g_live_bytes.fetch_add(bytes - header->mapped_bytes, std::memory_order_relaxed);
  header->mapped_bytes = bytes;
  return true;
}

void* huge_move(void* p, std::size_t size) noexcept {
  SegmentHeader* header = header_of(p);
  void* old_base = header->map_base;
  std::size_t old_bytes = header->mapped_bytes;
  std::size_t offset = static_cast<std::size_t>(static_cast<char*>(p) - static_cast<char*>(old_base));
  if (offset >= cfg::kSegmentSize || size > (std::size_t{1} << 46)) return nullptr;  // giant alignment: copy instead
  std::size_t bytes = round_to_os_page(offset + size);
  void* target = map_aligned(bytes, cfg::kSegmentSize);
  if (!target) return nullptr;
  if (!area_add(target) || !move_pages(old_base, old_bytes, bytes, target)) {
    unmap(target, bytes);
    return nullptr;
  }
  area_remove(old_base);
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
  pthread_mutex_unlock(&g_cache_lock);
  return s;
}

void huge_lock() noexcept { pthread_mutex_lock(&g_cache_lock); }
void huge_unlock() noexcept { pthread_mutex_unlock(&g_cache_lock); }

}  // namespace strata::malloc_detail
