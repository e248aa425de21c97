#include "os.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "checked.hpp"
#include "strata/platform.hpp"

namespace strata::malloc_detail {

namespace {
std::atomic<std::size_t> g_discarded_pages{0};
std::atomic<std::size_t> g_populate_calls{0};
std::atomic<std::size_t> g_discard_calls{0};
std::atomic<std::size_t> g_mapped_bytes{0};

constexpr std::size_t kAddressBits = 47;  // x86-64 user space
constexpr std::size_t kAreaCount = std::size_t{1} << (kAddressBits - cfg::kSegmentShift);
constexpr std::size_t kAreaWords = kAreaCount / 64;
std::atomic<std::atomic<std::uint64_t>*> g_area_words{nullptr};

std::atomic<std::uint64_t>* area_words(bool create) noexcept {
  auto* words = g_area_words.load(std::memory_order_acquire);
  if (words || !create) return words;
  // Lazily backed: only the words for areas in use are ever touched.
  void* fresh = platform::map_pages(kAreaWords * sizeof(std::uint64_t));
  if (!fresh) return nullptr;
  auto* mine = static_cast<std::atomic<std::uint64_t>*>(fresh);
  if (g_area_words.compare_exchange_strong(words, mine, std::memory_order_acq_rel)) return mine;
  platform::unmap_pages(fresh, kAreaWords * sizeof(std::uint64_t));  // another thread won
  return words;
}

std::size_t area_index(const void* segment) noexcept {
  return reinterpret_cast<std::uintptr_t>(segment) >> cfg::kSegmentShift;
}
}  // namespace

// Where the next aligned mapping probably fits: just below the last one (the
// kernel hands out addresses top-down), so that most mappings need neither
// over-mapping nor trimming.
std::atomic<std::uintptr_t> g_next_hint{0};

void* map_at_hint(std::size_t bytes, std::size_t align) noexcept {
  std::uintptr_t last = g_next_hint.load(std::memory_order_relaxed);
  if (last < bytes + align) return nullptr;
  std::uintptr_t want = (last - bytes) & ~(align - 1);
  return platform::map_pages_at(reinterpret_cast<void*>(want), bytes);
}

namespace {
// Of the mapping [raw, raw+span), keeps the `bytes` that start where start +
// offset is aligned to `align`, and unmaps the rest; returns that start.
std::uintptr_t trim_to_alignment(void* raw, std::size_t span, std::size_t bytes, std::size_t align,
                                 std::size_t offset = 0) noexcept {
  auto base = reinterpret_cast<std::uintptr_t>(raw);
  std::uintptr_t start = ((base + offset + align - 1) & ~(align - 1)) - offset;
  if (start > base) platform::unmap_pages(raw, start - base);
  std::uintptr_t tail = start + bytes;
  if (base + span > tail) platform::unmap_pages(reinterpret_cast<void*>(tail), base + span - tail);
  return start;
}
}  // namespace

void* map_aligned(std::size_t bytes, std::size_t align, std::size_t offset) noexcept {
  if (offset == 0) {
    if (void* p = map_at_hint(bytes, align)) {
      g_next_hint.store(reinterpret_cast<std::uintptr_t>(p), std::memory_order_relaxed);
      g_mapped_bytes.fetch_add(bytes, std::memory_order_relaxed);
      return p;
    }
  }
  // Over-map by align, then trim both ends: the kernel gives page alignment only.
  std::size_t span = bytes + align;
  if (span < bytes) {
    errno = ENOMEM;
    return nullptr;
  }
  void* raw = platform::map_pages(span);
  if (!raw) return nullptr;
  std::uintptr_t start = trim_to_alignment(raw, span, bytes, align, offset);
  if (offset == 0) g_next_hint.store(start, std::memory_order_relaxed);
  g_mapped_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return reinterpret_cast<void*>(start);
}

bool move_pages(void* from, std::size_t old_bytes, std::size_t new_bytes, void* to) noexcept {
  if (!platform::move_pages(from, old_bytes, new_bytes, to)) return false;
  g_mapped_bytes.fetch_sub(old_bytes, std::memory_order_relaxed);  // `to` was counted by map_aligned
  return true;
}

bool grow_in_place(void* ptr, std::size_t old_bytes, std::size_t new_bytes) noexcept {
  if (!platform::grow_pages_in_place(ptr, old_bytes, new_bytes)) return false;
  g_mapped_bytes.fetch_add(new_bytes - old_bytes, std::memory_order_relaxed);
  return true;
}

namespace {
// vm.overcommit_memory: 2 means every writable private page is charged when
// mapped, MAP_NORESERVE or not.
bool kernel_commits_strictly() noexcept {
  int fd = ::open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char mode = '0';
  bool strict = ::read(fd, &mode, 1) == 1 && mode == '2';
  ::close(fd);
  return strict;
}
}  // namespace

namespace {
// RLIMIT_AS, or 0 when there is none.
std::size_t address_space_limit() noexcept {
  struct rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<std::size_t>(limit.rlim_cur);
}

// The process's address space now (/proc/self/statm; 0 if unknown).
std::size_t address_space_in_use() noexcept {
  int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[32];
  ssize_t n = ::read(fd, text, sizeof text);
  ::close(fd);
  std::size_t pages = 0;
  for (ssize_t i = 0; i < n && text[i] >= '0' && text[i] <= '9'; ++i) pages = pages * 10 + static_cast<std::size_t>(text[i] - '0');
  return pages * platform::page_size();
}

}  // namespace

std::size_t address_space_budget(std::size_t wanted, std::size_t granule) noexcept {
  std::size_t limit = address_space_limit();
  if (limit == 0) return wanted;
  std::size_t budget = (limit / 8) & ~(granule - 1);
  return budget < wanted ? budget : wanted;
}

namespace {
// Every reservation of reserve_address_space (they are never unmapped), for
// in_reservation: entries are written before the count that publishes them.
constexpr std::size_t kReservationsMax = 64;
std::pair<std::uintptr_t, std::size_t> g_reservations[kReservationsMax];
std::atomic<std::size_t> g_reservation_count{0};
pthread_mutex_t g_reservations_lock = PTHREAD_MUTEX_INITIALIZER;

void note_reservation(std::uintptr_t start, std::size_t bytes) noexcept {
  pthread_mutex_lock(&g_reservations_lock);
  std::size_t n = g_reservation_count.load(std::memory_order_relaxed);
  if (n < kReservationsMax) {
    g_reservations[n] = {start, bytes};
    g_reservation_count.store(n + 1, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_reservations_lock);
}
}  // namespace

bool in_reservation(const void* p) noexcept {
  std::size_t n = g_reservation_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i)
    if (reinterpret_cast<std::uintptr_t>(p) - g_reservations[i].first < g_reservations[i].second) return true;
  return false;
}

void* reserve_address_space(std::size_t bytes, std::size_t align) noexcept {
  // Asked once; no function-local static (its guard would make libstrata
  // depend on libstdc++, loaded and initialised into every program).
  static std::atomic<int> strict{-1};
  if (strict.load(std::memory_order_relaxed) < 0) strict.store(kernel_commits_strictly(), std::memory_order_relaxed);
  if (strict.load(std::memory_order_relaxed) == 1) return nullptr;
  std::size_t span = bytes + align;
  void* raw = platform::map_pages(span, platform::Swap::kUnreserved);
  if (!raw) return nullptr;
  std::uintptr_t start = trim_to_alignment(raw, span, bytes, align);
  note_reservation(start, bytes);
  g_mapped_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return reinterpret_cast<void*>(start);
}

MoveResult move_within_reservation(void* from, std::size_t bytes, void* to) noexcept {
  if (!platform::move_pages(from, bytes, bytes, to)) return MoveResult::kNotMoved;
  // At `from` only: another thread may have mapped the hole in the meantime.
  if (platform::map_pages_at(from, bytes, platform::Swap::kUnreserved)) return MoveResult::kMoved;
  g_mapped_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  return MoveResult::kMovedLeavingAHole;
}

void unmap(void* ptr, std::size_t bytes) noexcept {
  platform::unmap_pages(ptr, bytes);
  g_mapped_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

// ---- the segment range ----------------------------------------------------

namespace {
constexpr std::size_t kRangeSegmentsMax = cfg::kSegmentRangeBytes / cfg::kSegmentSize;
// Under g_range_lock.
pthread_mutex_t g_range_lock = PTHREAD_MUTEX_INITIALIZER;
bool g_range_tried = false;
AddressRange g_range;
std::size_t g_range_segments = 0;
std::size_t g_range_carved = 0;
std::uint64_t g_range_used[kRangeSegmentsMax / 64];  // bit i: segment i is carved
std::size_t g_range_first_free_word = 0;              // no free bit below this word

void reserve_range_locked() noexcept {
  if (g_range_tried) return;
  g_range_tried = true;
  int saved = errno;
  std::size_t bytes = address_space_budget(cfg::kSegmentRangeBytes, cfg::kSegmentSize);
  for (; bytes >= cfg::kSegmentRangeMinBytes; bytes = (bytes / 2) & ~(cfg::kSegmentSize - 1)) {
    // One segment more in front, never carved: free reads the header of p - 1,
    // one segment below the range for p at its start.
    std::size_t span = bytes + 2 * cfg::kSegmentSize;
    if (void* raw = platform::map_read_only(nullptr, span, false)) {
      g_range.base = trim_to_alignment(raw, span, bytes + cfg::kSegmentSize, cfg::kSegmentSize) + cfg::kSegmentSize;
      g_range.bytes = bytes;
      g_range_segments = bytes / cfg::kSegmentSize;
      break;
    }
  }
  errno = saved;
}

// Carving changes no mapping, so the kernel never refuses it for RLIMIT_AS:
// a segment is carved only where it would fit as a mapping of its own, the
// range counted whole as the kernel counts it, and the carved segments once
// more. A limit set after the reservation (below it) so bounds the heap as
// it would without a range: out of memory is still NULL + ENOMEM. Under
// g_range_lock.
bool limit_allows_a_segment() noexcept {
  std::size_t limit = address_space_limit();
  return limit == 0 || address_space_in_use() + (g_range_carved + 1) * cfg::kSegmentSize <= limit;
}

// Claims an uncarved segment of the range: its index, or kRangeSegmentsMax.
std::size_t claim_range_segment() noexcept {
  pthread_mutex_lock(&g_range_lock);
  reserve_range_locked();
  std::size_t segments = g_range_segments;
  std::size_t found = kRangeSegmentsMax;
  if (g_range_carved < segments && limit_allows_a_segment()) {
    for (std::size_t w = g_range_first_free_word; w * 64 < segments; ++w) {
      if (g_range_used[w] == ~std::uint64_t{0}) continue;
      std::size_t i = w * 64 + static_cast<std::size_t>(__builtin_ctzll(~g_range_used[w]));
      if (i >= segments) break;
      g_range_used[w] |= std::uint64_t{1} << (i % 64);
      g_range_first_free_word = w;
      ++g_range_carved;
      found = i;
      break;
    }
  }
  pthread_mutex_unlock(&g_range_lock);
  return found;
}

void release_range_segment(std::size_t i) noexcept {
  pthread_mutex_lock(&g_range_lock);
  g_range_used[i / 64] &= ~(std::uint64_t{1} << (i % 64));
  if (i / 64 < g_range_first_free_word) g_range_first_free_word = i / 64;
  --g_range_carved;
  pthread_mutex_unlock(&g_range_lock);
}

bool in_range(const void* segment) noexcept {
  return reinterpret_cast<std::uintptr_t>(segment) - g_range.base < g_range.bytes;
}
}  // namespace

AddressRange reserve_segment_range() noexcept {
  pthread_mutex_lock(&g_range_lock);
  reserve_range_locked();
  AddressRange range = g_range;
  pthread_mutex_unlock(&g_range_lock);
  return range;
}

void* map_segment() noexcept {
  int saved = errno;  // malloc does not change errno when it succeeds
  std::size_t i = claim_range_segment();
  if (i != kRangeSegmentsMax) {
    void* segment = reinterpret_cast<void*>(g_range.base + i * cfg::kSegmentSize);
    // Read-only to read-write in place; the commit charge (strict overcommit) is taken here.
    if (platform::unprotect_pages(segment, cfg::kSegmentSize)) {
      g_mapped_bytes.fetch_add(cfg::kSegmentSize, std::memory_order_relaxed);
      errno = saved;
      return segment;
    }
    release_range_segment(i);
  }
  errno = saved;
  return map_aligned(cfg::kSegmentSize, cfg::kSegmentSize);
}

void unmap_segment(void* segment) noexcept {
  if (!in_range(segment)) {
    unmap(segment, cfg::kSegmentSize);
    return;
  }
  int saved = errno;  // free() must not change errno
  // Fresh read-only pages in its place (zeros: no header), or, if the kernel
  // refuses (no mapping left to split), its pages discarded read-write.
  if (!platform::map_read_only(segment, cfg::kSegmentSize, true)) platform::discard_pages(segment, cfg::kSegmentSize);
  errno = saved;
  g_mapped_bytes.fetch_sub(cfg::kSegmentSize, std::memory_order_relaxed);
  release_range_segment((reinterpret_cast<std::uintptr_t>(segment) - g_range.base) / cfg::kSegmentSize);
}

void segment_range_lock() noexcept { pthread_mutex_lock(&g_range_lock); }
void segment_range_unlock() noexcept { pthread_mutex_unlock(&g_range_lock); }

namespace {
// The whole OS pages inside [ptr, ptr + bytes): false when there are none.
bool whole_pages_in(void* ptr, std::size_t bytes, std::uintptr_t* lo, std::uintptr_t* hi) noexcept {
  *lo = (reinterpret_cast<std::uintptr_t>(ptr) + cfg::kOsPageSize - 1) & ~(cfg::kOsPageSize - 1);
  *hi = (reinterpret_cast<std::uintptr_t>(ptr) + bytes) & ~(cfg::kOsPageSize - 1);
  return *lo < *hi;
}
}  // namespace

void discard(void* ptr, std::size_t bytes) noexcept {
  std::uintptr_t lo, hi;
  if (!whole_pages_in(ptr, bytes, &lo, &hi)) return;
  platform::discard_pages(reinterpret_cast<void*>(lo), hi - lo);
  g_discard_calls.fetch_add(1, std::memory_order_relaxed);
  g_discarded_pages.fetch_add((hi - lo) / cfg::kOsPageSize, std::memory_order_relaxed);
}

void discard_by_remapping(void* ptr, std::size_t bytes) noexcept {
  if (!platform::replace_pages(ptr, bytes)) {  // e.g. no mapping left to split into: the pages go back all the same
    discard(ptr, bytes);
    return;
  }
  g_discarded_pages.fetch_add(bytes / cfg::kOsPageSize, std::memory_order_relaxed);
}

std::size_t count_mappings() noexcept {
  int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[4096];
  std::size_t lines = 0;
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) lines += buffer[i] == '\n';
  }
  ::close(fd);
  return lines;
}

// Guard markers (platform::install_guard_marker) when the kernel has them:
// they split no kernel mapping and take the mmap lock for reading only.
namespace {
std::atomic<int> g_guard_markers{-1};  // 1: the kernel has them, 0: mprotect instead, -1: not asked yet
std::atomic<std::size_t> g_guard_attempts{0};
std::atomic<bool> g_guards_allowed{true};
std::atomic<std::size_t> g_guards_refused{0};
}  // namespace

// A guard marker, if the kernel has them: 1 set, 0 not set, -1 no markers (use mprotect).
int install_guard_marker(void* ptr, std::size_t bytes) noexcept {
  int markers = g_guard_markers.load(std::memory_order_relaxed);
  if (markers == 0) return -1;
  if (platform::install_guard_marker(ptr, bytes)) {
    if (markers < 0) g_guard_markers.store(1, std::memory_order_relaxed);
    return 1;
  }
  if (markers < 0 && errno == EINVAL) {  // an older kernel
    g_guard_markers.store(0, std::memory_order_relaxed);
    return -1;
  }
  return 0;
}

namespace {
// mprotect PROT_NONE, unless the process is near cfg::kGuardMappingsMax mappings
// (each protected range splits one; counted every few calls).
bool protect_splitting(void* ptr, std::size_t bytes) noexcept {
  if (g_guard_attempts.fetch_add(1, std::memory_order_relaxed) % cfg::kGuardMappingsCheckEvery == 0)
    g_guards_allowed.store(count_mappings() < cfg::kGuardMappingsMax, std::memory_order_relaxed);
  return g_guards_allowed.load(std::memory_order_relaxed) && platform::protect_pages(ptr, bytes);
}
}  // namespace

bool protect_guard(void* ptr, std::size_t bytes) noexcept {
  int saved = errno;
  int marker = install_guard_marker(ptr, bytes);
  if (marker == 1) return true;
  if (marker == -1 && protect_splitting(ptr, bytes)) return true;
  g_guards_refused.fetch_add(1, std::memory_order_relaxed);
  errno = saved;
  return false;
}

bool protect_freed(void* ptr, std::size_t bytes) noexcept {
  int saved = errno;  // free() must not change errno
  bool done = protect_splitting(ptr, bytes);
  if (!done) g_guards_refused.fetch_add(1, std::memory_order_relaxed);
  errno = saved;
  return done;
}

void unprotect_freed(void* ptr, std::size_t bytes) noexcept {
  int saved = errno;
  if (!platform::unprotect_pages(ptr, bytes)) report_misuse("cannot make freed memory usable again at", ptr);
  errno = saved;
}

void unprotect_guard(void* ptr, std::size_t bytes) noexcept {
  int saved = errno;  // free() must not change errno
  bool done = g_guard_markers.load(std::memory_order_relaxed) == 1 ? platform::remove_guard_marker(ptr, bytes)
                                                                   : platform::unprotect_pages(ptr, bytes);
  if (!done) report_misuse("cannot make a guard page usable again at", ptr);
  errno = saved;
}

void use_mprotect_guards() noexcept { g_guard_markers.store(0, std::memory_order_relaxed); }

bool guards_split_mappings() noexcept { return g_guard_markers.load(std::memory_order_relaxed) != 1; }

namespace {
// /sys/kernel/mm/transparent_hugepage/enabled: "always [madvise] never", the
// mode in brackets. False when it is [never] or unknown.
bool kernel_gives_huge_pages() noexcept {
  int fd = ::open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[64] = {};
  ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return false;
  const char* mode = std::strchr(text, '[');
  return mode && std::strncmp(mode, "[never]", 7) != 0;
}
}  // namespace

bool advise_huge_pages(void* ptr, std::size_t bytes) noexcept {
  if constexpr (!cfg::kHugePagesForLarge) return false;
  static std::atomic<int> available{-1};  // -1: the kernel's mode not read yet
  int saved = errno;  // malloc does not change errno on success
  if (available.load(std::memory_order_relaxed) < 0)
    available.store(kernel_gives_huge_pages(), std::memory_order_relaxed);
  bool advised = platform::advise_huge_pages(ptr, bytes) && available.load(std::memory_order_relaxed) == 1;
  errno = saved;
  return advised;
}

std::size_t guards_refused() noexcept { return g_guards_refused.load(std::memory_order_relaxed); }

void populate(void* ptr, std::size_t bytes) noexcept {
  static std::atomic<bool> unsupported{false};
  if (unsupported.load(std::memory_order_relaxed)) return;
  std::uintptr_t lo, hi;
  if (!whole_pages_in(ptr, bytes, &lo, &hi)) return;
  int saved = errno;  // calloc does not change errno when it succeeds
  g_populate_calls.fetch_add(1, std::memory_order_relaxed);
  if (!platform::populate_pages(reinterpret_cast<void*>(lo), hi - lo) && errno == EINVAL)
    unsupported.store(true, std::memory_order_relaxed);
  errno = saved;
}

std::uint32_t coarse_clock_ms() noexcept {
  struct timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  std::uint64_t ms = static_cast<std::uint64_t>(now.tv_sec) * 1000 + static_cast<std::uint64_t>(now.tv_nsec) / 1000000;
  return static_cast<std::uint32_t>(ms);
}

namespace {
std::atomic<std::size_t> g_erase_from{cfg::kEraseFrom};
}  // namespace

bool first_free_of_its_size(std::size_t bytes) noexcept {
  std::size_t from = g_erase_from.load(std::memory_order_relaxed);
  if (bytes < from || from > cfg::kEraseUpTo) return false;
  return g_erase_from.compare_exchange_strong(from, bytes + bytes / 8 + 1, std::memory_order_relaxed);
}

bool mapped_by_glibc_now(std::size_t bytes) noexcept {
  std::size_t from = g_erase_from.load(std::memory_order_relaxed);
  return bytes >= from && from <= cfg::kEraseUpTo;
}

std::size_t discarded_os_pages() noexcept { return g_discarded_pages.load(std::memory_order_relaxed); }
std::size_t discard_calls() noexcept { return g_discard_calls.load(std::memory_order_relaxed); }
std::size_t populate_calls() noexcept { return g_populate_calls.load(std::memory_order_relaxed); }
std::size_t mapped_bytes() noexcept { return g_mapped_bytes.load(std::memory_order_relaxed); }

bool area_add(const void* segment) noexcept {
  auto* words = area_words(true);
  if (!words) return false;
  std::size_t i = area_index(segment);
  words[i / 64].fetch_or(std::uint64_t{1} << (i % 64), std::memory_order_release);
  return true;
}

void area_remove(const void* segment) noexcept {
  auto* words = area_words(false);
  if (!words) return;
  std::size_t i = area_index(segment);
  words[i / 64].fetch_and(~(std::uint64_t{1} << (i % 64)), std::memory_order_release);
}

bool area_contains(const void* segment) noexcept {
  auto* words = area_words(false);
  std::size_t i = area_index(segment);
  if (!words || i >= kAreaCount) return false;
  return (words[i / 64].load(std::memory_order_acquire) >> (i % 64)) & 1;
}

}  // namespace strata::malloc_detail
