#include "large_heap.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>

#include "arena_lock.hpp"
#include "checked.hpp"
#include "config.hpp"
#include "options.hpp"
#include "os.hpp"
#include "segment.hpp"
#include "strata/assert.hpp"
#include "strata/layers/building_blocks/intrusive_dlist.hpp"

namespace strata::malloc_detail {

namespace {

constexpr std::size_t kHeader = 16;    // prev_size + size_flags
constexpr std::size_t kMinChunk = 32;  // header + the two free-list links
constexpr std::size_t kInUse = 1;
constexpr std::size_t kDirty = 2;  // free chunk whose pages may still be resident
constexpr std::size_t kFreeing = 4;  // in use, but a free has claimed it (deferred or about to be released)
// The header of a chunk that coalescing absorbed: size 0, so no free takes it
// for a chunk, and a second free of the object that was there reads as one.
constexpr std::size_t kAbsorbed = 8;
constexpr std::size_t kFlagMask = 15;
// A dirty free chunk of kStampedMin bytes or more holds, after its links, the
// coarse clock of the moment it became dirty (its age, for purge_aged). A
// purge discards from kPurgeFrom on, so that word stays with the header.
constexpr std::size_t kStampAt = 32;
constexpr std::size_t kPurgeFrom = kStampAt + sizeof(std::uint32_t);
constexpr std::size_t kStampedMin = kPurgeFrom + 16;
constexpr unsigned kSecondLevelBits = 3;  // 8 bins per power of two: ~12.5% apart
constexpr unsigned kSecondLevel = 1u << kSecondLevelBits;
constexpr unsigned kFirstLevel = 64;

// A chunk of a region, with its boundary tag. prev_size is the size of the
// chunk before it (0: first chunk of the region), kept exact at all times.
struct Chunk {
  std::size_t prev_size;
  std::size_t size_flags;
  // Free chunks: in their size bin. A chunk whose free was deferred (not in a
  // bin, see LargeArena::deferred_) is linked through free_link.next instead.
  layers::DListLink<Chunk> free_link;

  // Relaxed atomic reads: a freeing thread marks its own chunk kFreeing without
  // the lock while the lock holder may look at it as a neighbour.
  std::size_t flags_word() const noexcept { return __atomic_load_n(&size_flags, __ATOMIC_RELAXED); }
  std::size_t size() const noexcept { return flags_word() & ~kFlagMask; }
  bool in_use() const noexcept { return flags_word() & kInUse; }
  bool dirty() const noexcept { return flags_word() & kDirty; }
  Chunk* next() noexcept { return reinterpret_cast<Chunk*>(reinterpret_cast<char*>(this) + size()); }
  Chunk* prev() noexcept {
    return prev_size ? reinterpret_cast<Chunk*>(reinterpret_cast<char*>(this) - prev_size) : nullptr;
  }
  void* payload() noexcept { return reinterpret_cast<char*>(this) + kHeader; }
  static Chunk* of(const void* p) noexcept {
    return reinterpret_cast<Chunk*>(reinterpret_cast<std::uintptr_t>(p) - kHeader);
  }
  // The dirty free chunk's clock (see kStampAt); a chunk too small to hold it
  // has no page to discard and reads as old.
  void stamp(std::uint32_t ms) noexcept {
    if (size() >= kStampedMin) std::memcpy(reinterpret_cast<char*>(this) + kStampAt, &ms, sizeof ms);
  }
  std::uint32_t stamp_or(std::uint32_t old) noexcept {
    if (size() < kStampedMin) return old;
    std::uint32_t ms;
    std::memcpy(&ms, reinterpret_cast<char*>(this) + kStampAt, sizeof ms);
    return ms;
  }
};

// A region's huge-page extents (cfg::kHugePageSize each): how much of each
// is resident (LargeRegion::extents, populate_clean).
constexpr unsigned kExtents = cfg::kSegmentSize / cfg::kHugePageSize;

struct alignas(64) LargeRegion {
  SegmentHeader header;
  LargeArena* arena;
  layers::DListLink<LargeRegion> link;  // in its arena's regions_
  bool huge_pages = false;              // huge pages back it (advise_huge_pages)
  // Bit e: extent e is resident whole (a calloc faulted it in) and nothing
  // in it was discarded since. Bit kExtents + e: something in extent e was
  // discarded since the region was mapped, so faulting it in whole would
  // bring back free pages: calloc faults in its own range only there.
  std::atomic<std::uint8_t> extents{0};
};
constexpr std::size_t kRegionHeader = sizeof(LargeRegion);

// Large regions mapped by all arenas together (huge pages: add_region).
std::atomic<std::size_t> g_large_regions{0};

// A size bin: free chunks of one segregated-fit class, one pointer each.
using FreeBin = layers::IntrusiveDList<Chunk, &Chunk::free_link, layers::ListEnds::kHeadOnly>;
constexpr std::size_t kRegionPayload = cfg::kSegmentSize - kRegionHeader - kHeader;  // minus the end sentinel

Chunk* first_chunk(LargeRegion* r) noexcept {
  return reinterpret_cast<Chunk*>(reinterpret_cast<char*>(r) + kRegionHeader);
}

constexpr std::size_t chunk_size_for(std::size_t size) noexcept {
  std::size_t n = (size + kHeader + cfg::kMinAlign - 1) & ~(cfg::kMinAlign - 1);
  return n < kMinChunk ? kMinChunk : n;
}

// The hardened build's guard pages (cfg::kGuardPages), for objects of at
// least cfg::kLargeGuardMin bytes, which live in arenas of their own (the
// guarded arenas: a system call per allocation and per free is small beside
// the work such an object takes; smaller objects' arenas make none). In a
// guarded arena the last whole OS page of an in-use chunk is its guard, right
// after the object, which ends against it as far as the alignment allows.
// free makes the object's first whole pages inaccessible too (use after
// free) and puts the chunk in its arena's quarantine
// (LargeArena::quarantine_locked); when it leaves, they and the guard are
// lifted before the chunk can coalesce, so a free chunk never holds a guard
// and coalescing, purging and carving never meet one. (Leaving freed chunks protected in the bins instead cost the
// unguarding of whatever a new object is carved from: docs/benchmarks-choices.md,
// "Guarded large chunks".)
constexpr std::size_t kGuard = cfg::kGuardPages ? cfg::kOsPageSize : 0;
bool in_guarded_arena(const void* p) noexcept;

std::uintptr_t page_down(std::uintptr_t a) noexcept { return a & ~(cfg::kOsPageSize - 1); }
std::uintptr_t page_up(std::uintptr_t a) noexcept { return page_down(a + cfg::kOsPageSize - 1); }

char* guard_of(Chunk* c) noexcept {
  return reinterpret_cast<char*>(page_down(reinterpret_cast<std::uintptr_t>(c) + c->size()) - kGuard);
}

// A guarded chunk's protected pages while it is quarantined: the object's
// first whole pages, up to cfg::kLargeFreedProtectBytes. The page holding the
// header and the free-list links stays accessible (neighbours read the header
// when they coalesce, a second free reads it, a deferred free links the chunk).
char* freed_pages_of(Chunk* c) noexcept {
  return reinterpret_cast<char*>(page_up(reinterpret_cast<std::uintptr_t>(c) + kMinChunk));
}
std::size_t freed_bytes_of(Chunk* c) noexcept {
  auto whole = static_cast<std::size_t>(guard_of(c) - freed_pages_of(c));
  return whole < cfg::kLargeFreedProtectBytes ? whole : cfg::kLargeFreedProtectBytes;
}

// The freed object's bytes before its protected pages (on the header's
// page, which stays accessible) are zeroed: a read after free there finds
// nothing of the object's contents.
[[maybe_unused]] void erase_freed_start(Chunk* c, void* p) noexcept {
  char* protected_from = freed_pages_of(c);
  if (protected_from > static_cast<char*>(p))
    std::memset(p, 0, static_cast<std::size_t>(protected_from - static_cast<char*>(p)));
}

std::size_t usable_size_of(Chunk* c) noexcept {
  if (cfg::kGuardPages && in_guarded_arena(c))
    return static_cast<std::size_t>(guard_of(c) - static_cast<char*>(c->payload()));
  return c->size() - kHeader;
}

// Where the object goes in chunk c: its payload, or further in when it must
// be aligned (a gap in front stays a free chunk, so at least kMinChunk) or
// must end against a guard page (then *guard: where the guard goes).
std::uintptr_t placement(Chunk* c, std::size_t size, std::size_t align, bool guarded, std::uintptr_t* guard) noexcept {
  auto payload = reinterpret_cast<std::uintptr_t>(c->payload());
  auto fits = [payload](std::uintptr_t at) { return at == payload || (at > payload && at - payload >= kMinChunk); };
  if (cfg::kGuardPages && guarded) {
    std::uintptr_t g = page_up(payload + size);
    while (!fits((g - size) & ~(align - 1))) g += cfg::kOsPageSize;
    *guard = g;
    return (g - size) & ~(align - 1);
  }
  *guard = 0;
  if (align <= cfg::kMinAlign) return payload;
  std::uintptr_t aligned = (payload + align - 1) & ~(align - 1);
  return fits(aligned) ? aligned : aligned + align;
}

// A size bin: first level (power of two), second level (one of 8 steps).
struct Bin {
  unsigned fl, sl;
  bool operator==(const Bin&) const noexcept = default;
};

[[gnu::always_inline]] inline Bin bin_of(std::size_t size) noexcept {
  unsigned fl = 63u - static_cast<unsigned>(__builtin_clzll(size));
  return {fl, static_cast<unsigned>(size >> (fl - kSecondLevelBits)) & (kSecondLevel - 1)};
}

// A free chunk found for a request, and the bin it is in.
struct Found {
  Chunk* chunk;
  Bin bin;
};

}  // namespace

class LargeArena {
 public:
  ArenaLock lock;

  // zero: the object must read as zeros (calloc).
  void* allocate(std::size_t size, std::size_t align, bool zero) noexcept;
  // malloc's common case: no alignment, no guard, no clearing.
  void* allocate_plain(std::size_t size) noexcept;
  bool guarded() const noexcept;  // one of the hardened build's guarded arenas
  void release(Chunk* c, bool foreign) noexcept;
  std::size_t deferred_bytes() const noexcept { return deferred_bytes_.load(std::memory_order_relaxed); }
  bool resize(Chunk* c, std::size_t size) noexcept;
  bool resize_guarded(Chunk* c, std::size_t size) noexcept;
  bool resize_locked(Chunk* c, std::size_t need) noexcept;
  // Take the lock (and release the chunks freed while it was busy); give it up,
  // with one more look for chunks freed meanwhile.
  void acquire() noexcept {
    lock.lock();
    release_deferred();
  }
  void unlock() noexcept {
    release_deferred();
    lock.unlock();
    // A free that found the lock busy after the release above would wait for
    // the next operation on this arena: look once more.
    if (deferred_.load(std::memory_order_acquire) != nullptr) [[unlikely]] release_late_frees();
  }
  // Purging on a clock: may a dirty chunk here have waited purge_delay_ms()
  // by `now`? (No lock: a hint.) try_purge_aged discards those that have,
  // unless the lock is busy.
  bool purge_due(std::uint32_t now) const noexcept {
    return dirty_waiting_.load(std::memory_order_relaxed) &&
           now - oldest_dirty_ms_.load(std::memory_order_relaxed) >= purge_delay_ms();
  }
  void try_purge_aged(std::uint32_t now) noexcept {
    if (!lock.try_lock()) return;
    release_deferred();
    purge_aged(now);
    unlock();
  }
  const char* verify() noexcept;  // under the lock; see large_verify
  // Debug builds: the whole arena checked every kVerifyEvery frees (a walk
  // of every region: too slow for each one). Under the lock.
  void verify_now_and_then() noexcept {
#if STRATA_ASSERTIONS
    if (++frees_since_verify_ % kVerifyEvery == 0) STRATA_ASSERT_VALID(verify());
#endif
  }
  void add_stats(LargeStats& s) noexcept {
    s.regions += region_count_;
    s.live_objects += live_objects_;
    s.live_bytes += live_bytes_;
    s.free_bytes += free_bytes_;
    s.dirty_bytes += dirty_bytes_;
    s.quarantined_objects += quarantined_;
    s.quarantined_bytes += quarantined_bytes_;
    if (spare_limit() > s.largest_spare_limit) s.largest_spare_limit = spare_limit();
    if (first_map_) {  // the biggest chunk is in the highest non-empty bin
      unsigned fl = 63u - static_cast<unsigned>(__builtin_clzll(first_map_));
      unsigned sl = 31u - static_cast<unsigned>(__builtin_clz(second_map_[fl]));
      for (Chunk* c = bins_[fl][sl].front(); c; c = FreeBin::next(c))
        if (c->size() > s.largest_free) s.largest_free = c->size();
    }
  }

 private:
  // In and out of the bins, with the free and dirty byte counts.
  void insert(Chunk* c) noexcept;
  void remove(Chunk* c) noexcept;
  // In and out of bin b, nothing counted.
  [[gnu::always_inline]] void link(Chunk* c, Bin b) noexcept;
  [[gnu::always_inline]] void unlink(Chunk* c, Bin b) noexcept;
  // `now`, of `size` bytes, takes the place of `old`, which was in bin `was`:
  // in old's place in the list when the size stays in that bin.
  [[gnu::always_inline]] void rebin(Chunk* old, Bin was, Chunk* now, std::size_t size) noexcept;
  [[gnu::always_inline]] Found find(std::size_t size) noexcept;
  [[gnu::always_inline]] Chunk* carve(Found f, std::size_t need) noexcept;
  Chunk* carve_placed(Chunk* c, std::size_t size, std::size_t align, std::uintptr_t* guard) noexcept;
  bool add_region() noexcept;
  void split_tail(Chunk* c, std::size_t keep) noexcept;
  void purge() noexcept;
  // Discard the pages inside dirty chunks that have waited purge_delay_ms()
  // by `now`; the next such walk comes half a delay later at the soonest.
  void purge_aged(std::uint32_t now) noexcept;
  void purge_if_due(std::uint32_t now) noexcept {
    if (purge_due(now)) purge_aged(now);
  }
  // Dirty bytes came in at `now`: the clock starts for them unless older ones wait.
  void note_dirty(std::uint32_t now) noexcept {
    if (dirty_waiting_.load(std::memory_order_relaxed)) return;
    oldest_dirty_ms_.store(now, std::memory_order_relaxed);
    dirty_waiting_.store(true, std::memory_order_relaxed);
  }
  void purge_chunk(Chunk* c) noexcept;  // its inner pages discarded, clean
  [[gnu::always_inline]] void release_locked(Chunk* c) noexcept;
  [[gnu::always_inline]] void free_locked(Chunk* c) noexcept;
  void free_region_chunk(Chunk* c, std::size_t size, Chunk* prev, Chunk* next) noexcept;
  void quarantine_locked(Chunk* c) noexcept;
  // The quarantine's bytes at most: a share of the arena's live bytes, at
  // least the floor (config.hpp, kLargeQuarantineShare).
  std::size_t quarantine_limit() const noexcept {
    return std::clamp(live_bytes_ / cfg::kLargeQuarantineShare, cfg::kLargeQuarantineFloor, cfg::kLargeQuarantineBytes);
  }
  void release_deferred() noexcept {
    if (deferred_.load(std::memory_order_relaxed) != nullptr) release_deferred_list();
  }
  void release_deferred_list() noexcept;
  void release_late_frees() noexcept;
  bool try_defer(Chunk* c) noexcept;
  void defer(Chunk* c) noexcept;

  std::uint64_t first_map_ = 0;
  std::uint32_t second_map_[kFirstLevel] = {};
  FreeBin bins_[kFirstLevel][kSecondLevel];
  layers::IntrusiveDList<LargeRegion, &LargeRegion::link, layers::ListEnds::kHeadOnly> regions_;
  std::size_t region_count_ = 0;
  std::size_t empty_regions_ = 0;  // completely free regions kept mapped
  // How many empty regions stay mapped (kLargeSpareRegions..kLargeSpareRegionsMax):
  // one more for each region mapped while an unmap is unanswered, one less
  // for each unmap -- the rule of the thread heaps' empty blocks. Kept as
  // the excess over the floor: an arena that starts all zero lies in .bss,
  // whose pages a program that makes no large object never touches.
  std::size_t spare_extra_ = 0;
  std::size_t spare_limit() const noexcept { return cfg::kLargeSpareRegions + spare_extra_; }
  std::size_t unanswered_unmaps_ = 0;
  std::size_t dirty_bytes_ = 0;
  std::size_t free_bytes_ = 0;
  // Are dirty chunks waiting, and the coarse clock when the oldest of them
  // became dirty (no later than that): written under the lock, read by
  // purge_due without it.
  std::atomic<bool> dirty_waiting_{false};
  std::atomic<std::uint32_t> oldest_dirty_ms_{0};
  std::size_t live_objects_ = 0;
  std::size_t live_bytes_ = 0;
  // Chunks whose free found the lock busy (typically a free from another
  // thread while the owner allocates), linked through free_link.next and released
  // by whoever holds the lock next: a free never waits for the lock. On a
  // cache line of their own: the other arenas' threads write them, and the
  // counts above, on the same line, made every update of those a miss
  // (bench/malloc's xfree, perf).
  alignas(64) std::atomic<Chunk*> deferred_{nullptr};
  std::atomic<std::size_t> deferred_bytes_{0};
  // The hardened build's quarantine of freed guarded chunks (protected, still
  // flagged in use and freeing): a ring, oldest at quarantine_first_.
  static constexpr std::size_t kQuarantineRing = cfg::kLargeQuarantineSlots ? cfg::kLargeQuarantineSlots : 1;
  Chunk* quarantine_[kQuarantineRing] = {};
  std::size_t quarantine_first_ = 0;
  std::size_t quarantined_ = 0;
  std::size_t quarantined_bytes_ = 0;
#if STRATA_ASSERTIONS
  static constexpr std::size_t kVerifyEvery = 64;
  std::size_t frees_since_verify_ = 0;
#endif
};

namespace {
constinit LargeArena g_arenas[cfg::kLargeArenas];
// The hardened build's arenas for objects of cfg::kLargeGuardMin bytes or more.
constexpr std::size_t kGuardedArenas = cfg::kGuardPages ? cfg::kLargeArenas : 1;
constinit LargeArena g_guarded_arenas[kGuardedArenas];
LargeRegion* region_of(const void* p) noexcept { return reinterpret_cast<LargeRegion*>(segment_base(p)); }

bool in_guarded_arena(const void* p) noexcept { return region_of(p)->arena->guarded(); }

// Where a thread's objects of `size` go: its arena, or that arena's guarded twin.
LargeArena& arena_for(const LargeArena& arena, std::size_t size) noexcept {
  if constexpr (!cfg::kGuardPages) return const_cast<LargeArena&>(arena);
  std::size_t i = static_cast<std::size_t>(&arena - g_arenas);
  return cfg::kGuardPages && size >= cfg::kLargeGuardMin ? g_guarded_arenas[i] : g_arenas[i];
}

// Every arena, the guarded ones too.
template <class F>
void for_each_arena(F f) noexcept {
  for (auto& arena : g_arenas) f(arena);
  if constexpr (cfg::kGuardPages)
    for (auto& arena : g_guarded_arenas) f(arena);
}
}  // namespace

bool LargeArena::guarded() const noexcept {
  auto self = reinterpret_cast<std::uintptr_t>(this);
  auto first = reinterpret_cast<std::uintptr_t>(g_guarded_arenas);
  return cfg::kGuardPages && self - first < sizeof g_guarded_arenas;
}

inline void LargeArena::link(Chunk* c, Bin b) noexcept {
  bins_[b.fl][b.sl].push_front(c);
  first_map_ |= std::uint64_t{1} << b.fl;
  second_map_[b.fl] |= 1u << b.sl;
}

inline void LargeArena::unlink(Chunk* c, Bin b) noexcept {
  FreeBin& bin = bins_[b.fl][b.sl];
  STRATA_ASSERT(!bin.empty() && (second_map_[b.fl] >> b.sl & 1) && (first_map_ >> b.fl & 1));
  bin.remove(c);
  if (bin.empty()) {
    second_map_[b.fl] &= ~(1u << b.sl);
    if (!second_map_[b.fl]) first_map_ &= ~(std::uint64_t{1} << b.fl);
  }
}

void LargeArena::insert(Chunk* c) noexcept {
  STRATA_ASSERT(!c->in_use() && c->size() >= kMinChunk);
  link(c, bin_of(c->size()));
  free_bytes_ += c->size();
  if (c->dirty()) dirty_bytes_ += c->size();
}

void LargeArena::remove(Chunk* c) noexcept {
  STRATA_ASSERT(free_bytes_ >= c->size());
  unlink(c, bin_of(c->size()));
  free_bytes_ -= c->size();
  if (c->dirty()) dirty_bytes_ -= c->size();
}

// Splitting a chunk or coalescing one with a neighbour mostly leaves the size
// in its bin (bins are 12.5% wide): then the list keeps its order and the
// bitmaps stay as they are.
inline void LargeArena::rebin(Chunk* old, Bin was, Chunk* now, std::size_t size) noexcept {
  Bin is = bin_of(size);
  if (is == was) {
    if (old != now) bins_[was.fl][was.sl].replace(old, now);
  } else {
    unlink(old, was);
    link(now, is);
  }
}

// Good fit: round the request up to the next bin boundary, so that every chunk
// in the first non-empty bin at or above it fits.
inline Found LargeArena::find(std::size_t size) noexcept {
  Bin b = bin_of(size);
  if (size & ((std::size_t{1} << (b.fl - kSecondLevelBits)) - 1)) {  // above the bin's lower bound: the next bin
    if (++b.sl == kSecondLevel) {
      b.sl = 0;
      ++b.fl;
    }
  }
  std::uint32_t second = second_map_[b.fl] & (~0u << b.sl);
  if (!second) {
    std::uint64_t first = b.fl + 1 < kFirstLevel ? first_map_ & (~std::uint64_t{0} << (b.fl + 1)) : 0;
    if (!first) return {nullptr, b};
    b.fl = static_cast<unsigned>(__builtin_ctzll(first));
    second = second_map_[b.fl];
  }
  b.sl = static_cast<unsigned>(__builtin_ctz(second));
  return {bins_[b.fl][b.sl].front(), b};
}

bool LargeArena::add_region() noexcept {
  void* mem = map_segment();
  if (!mem) return false;
  // Huge pages only for an arena that already holds several regions: a
  // program with a few MiB of large objects keeps its RSS to what it touches.
  bool huge_pages = g_large_regions.load(std::memory_order_relaxed) >= cfg::kHugePagesFromRegion &&
                    advise_huge_pages(mem, cfg::kSegmentSize);
  if (unanswered_unmaps_ > 0) {  // a region unmapped earlier is needed again
    --unanswered_unmaps_;
    if (spare_limit() < cfg::kLargeSpareRegionsMax) ++spare_extra_;
  }
  if (!area_add(mem)) {
    unmap_segment(mem);
    errno = ENOMEM;
    return false;
  }
  auto* r = new (mem) LargeRegion{};
  init_segment_header(r->header, SegmentKind::kLarge, mem);
  r->arena = this;
  r->huge_pages = huge_pages;
  regions_.push_front(r);
  ++region_count_;
  g_large_regions.fetch_add(1, std::memory_order_relaxed);
  Chunk* c = first_chunk(r);
  c->prev_size = 0;
  c->size_flags = kRegionPayload;  // fresh pages: clean
  Chunk* sentinel = c->next();
  sentinel->prev_size = kRegionPayload;
  sentinel->size_flags = kInUse;
  insert(c);
  ++empty_regions_;
  return true;
}

// Cut c (not on a free list) down to `keep` bytes; the rest becomes a free
// chunk (dirty like c was, or because it was in use) when big enough.
void LargeArena::split_tail(Chunk* c, std::size_t keep) noexcept {
  std::size_t size = c->size();
  STRATA_ASSERT(keep >= kMinChunk && keep <= size && keep % cfg::kMinAlign == 0);
  if (size - keep < kMinChunk) return;
  std::size_t flags = c->size_flags & kFlagMask;
  // The tail's clock: now if it was in use, else the chunk's (read before
  // the tail's header may cover it).
  std::uint32_t now = coarse_clock_ms();
  std::uint32_t ms = c->in_use() || !(flags & kDirty) ? now : c->stamp_or(now);
  auto* tail = reinterpret_cast<Chunk*>(reinterpret_cast<char*>(c) + keep);
  tail->prev_size = keep;
  tail->size_flags = (size - keep) | (c->in_use() ? kDirty : (flags & kDirty));
  c->size_flags = keep | flags;
  Chunk* after = tail->next();
  if (!after->in_use()) {  // coalesce the tail with a free successor
    remove(after);
    if (!after->dirty())
      ms = now;
    else if (std::uint32_t a = after->stamp_or(ms); static_cast<std::int32_t>(a - ms) > 0)
      ms = a;  // the younger
    tail->size_flags = (tail->size() + after->size()) | kDirty;
    after->size_flags = kAbsorbed;
  }
  tail->next()->prev_size = tail->size();
  if (tail->dirty()) {
    tail->stamp(ms);
    note_dirty(ms);
  }
  insert(tail);
}

void LargeArena::release_late_frees() noexcept {
  do {
    if (!lock.try_lock()) return;  // the holder releases them
    release_deferred();
    lock.unlock();
  } while (deferred_.load(std::memory_order_acquire) != nullptr);
}

void LargeArena::release_deferred_list() noexcept {
  Chunk* c = deferred_.exchange(nullptr, std::memory_order_acquire);
  std::size_t bytes = 0;
  while (c) {
    Chunk* next = c->free_link.next;
    bytes += c->size();
    release_locked(c);
    c = next;
  }
  deferred_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
}

void LargeArena::defer(Chunk* c) noexcept {
  deferred_bytes_.fetch_add(c->size(), std::memory_order_relaxed);
  Chunk* head = deferred_.load(std::memory_order_relaxed);
  do {
    c->free_link.next = head;
  } while (!deferred_.compare_exchange_weak(head, c, std::memory_order_release, std::memory_order_relaxed));
}

// Defer a foreign free unless the arena already holds kLargeDeferredBytes of
// them (its threads may be idle or gone: then the freer releases them itself).
bool LargeArena::try_defer(Chunk* c) noexcept {
  if (deferred_bytes() + c->size() > cfg::kLargeDeferredBytes) return false;
  defer(c);
  return true;
}

namespace {

// Discard the whole pages in [p, p+bytes) of a large region, and note it in
// the extents they fall in: an extent discarded whole (but for a page at
// either end: headers, partial pages) is all free and clean, as fresh again;
// one discarded in part is marked so (the mark set first, so that a racing
// populate_clean does not mark it resident again).
void discard_in_region(void* p, std::size_t bytes) noexcept {
  LargeRegion* r = region_of(p);
  discard(p, bytes);
  auto lo = reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(r);
  auto hi = lo + bytes;
  std::uint8_t touched = 0, in_part = 0;
  for (unsigned e = static_cast<unsigned>(lo / cfg::kHugePageSize); e < kExtents && e * cfg::kHugePageSize < hi; ++e) {
    touched |= static_cast<std::uint8_t>(1u << e);
    bool whole = lo <= e * cfg::kHugePageSize + cfg::kOsPageSize && hi + cfg::kOsPageSize >= (e + 1) * cfg::kHugePageSize;
    if (!whole) in_part |= static_cast<std::uint8_t>(1u << e);
  }
  auto fresh = static_cast<std::uint8_t>(touched & ~in_part);
  r->extents.fetch_or(static_cast<std::uint8_t>(in_part << kExtents), std::memory_order_relaxed);
  r->extents.fetch_and(static_cast<std::uint8_t>(~(touched | fresh << kExtents)), std::memory_order_relaxed);
}

// Fault in the clean pages [from, to) of a calloc (they read as zeros). Where
// huge pages back the region, an extent nothing was discarded in is faulted
// in whole, once: the kernel would give the whole huge page at the first
// touch anyway, and later callocs there need no system call (bench/malloc's
// stress2, issue 20: 3 000 populate calls a run, most inside extents faulted
// in already). Elsewhere, only the range.
void populate_clean(char* from, char* to) noexcept {
  LargeRegion* r = region_of(from);
  if (!r->huge_pages) {
    populate(from, static_cast<std::size_t>(to - from));
    return;
  }
  auto base = reinterpret_cast<std::uintptr_t>(r);
  auto first = static_cast<unsigned>((reinterpret_cast<std::uintptr_t>(from) - base) / cfg::kHugePageSize);
  auto last = static_cast<unsigned>((reinterpret_cast<std::uintptr_t>(to) - 1 - base) / cfg::kHugePageSize);
  std::uint8_t state = r->extents.load(std::memory_order_relaxed);
  for (unsigned e = first; e <= last; ++e) {
    if (state >> e & 1) continue;  // resident whole already
    char* lo = reinterpret_cast<char*>(base + e * cfg::kHugePageSize);
    char* hi = lo + cfg::kHugePageSize;
    if (state >> (kExtents + e) & 1) {  // discarded in: this object's pages only
      char* start = from > lo ? from : lo;
      populate(start, static_cast<std::size_t>((to < hi ? to : hi) - start));
      continue;
    }
    populate(lo, cfg::kHugePageSize);
    auto bit = static_cast<std::uint8_t>(1u << e);
    std::uint8_t seen = r->extents.load(std::memory_order_relaxed);
    while (!(seen >> (kExtents + e) & 1) &&
           !r->extents.compare_exchange_weak(seen, seen | bit, std::memory_order_relaxed)) {
    }
  }
}

// Clear `bytes` of a new object at `payload`, carved from a chunk that began
// at `chunk` with `chunk_size` bytes. A clean chunk (fresh, or purged) reads as
// zeros but for its header and links and the partial OS pages at both ends,
// which purge() does not discard: only those parts of the object are cleared.
void clear_object(char* payload, std::size_t bytes, char* chunk, std::size_t chunk_size, bool clean) noexcept {
  char* end = payload + bytes;
  if (!clean) {
    std::memset(payload, 0, bytes);
    return;
  }
  auto address = [](const char* p) { return reinterpret_cast<std::uintptr_t>(p); };
  auto* head_end = reinterpret_cast<char*>(page_up(address(chunk + kPurgeFrom)));  // discard() rounds inwards
  auto* tail_start = reinterpret_cast<char*>(page_down(address(chunk + chunk_size)));
  // A placed object (alignment, or the hardened build's guard) may start past head_end.
  if (payload < head_end) std::memset(payload, 0, static_cast<std::size_t>((head_end < end ? head_end : end) - payload));
  if (tail_start < end) {
    char* from = tail_start > payload ? tail_start : payload;
    std::memset(from, 0, static_cast<std::size_t>(end - from));
  }
  // The zero pages between, faulted in at once: calloc's caller is about to
  // use them (stress2, which reads each object before writing it, took two
  // faults a page without this: 180 K faults against 120 K with the memset).
  char* zero_start = head_end > payload ? head_end : payload;
  char* zero_end = tail_start < end ? tail_start : end;
  if (zero_start < zero_end) populate_clean(zero_start, zero_end);
}

}  // namespace

// The common case: the object at the front of the free chunk found, the rest
// (if a chunk's worth) a free chunk behind it, in the found one's place in its
// bin when the size stays in that bin (no list or bitmap work;
// docs/benchmarks-choices.md, "Carving in place").
inline Chunk* LargeArena::carve(Found f, std::size_t need) noexcept {
  Chunk* c = f.chunk;
  std::size_t word = c->flags_word();
  std::size_t size = word & ~kFlagMask;
  std::size_t dirty = word & kDirty;
  STRATA_ASSERT(!(word & kInUse) && size >= need && bin_of(size) == f.bin);
  if (std::size_t left = size - need; left < kMinChunk) {
    need = size;
    unlink(c, f.bin);
  } else {  // (the chunk after a free one is in use: the rest has no free neighbour to join)
    std::uint32_t ms = dirty ? c->stamp_or(0) : 0;
    auto* rest = reinterpret_cast<Chunk*>(reinterpret_cast<char*>(c) + need);
    rest->prev_size = need;
    rest->size_flags = left | dirty;
    if (dirty) rest->stamp(ms);
    reinterpret_cast<Chunk*>(reinterpret_cast<char*>(rest) + left)->prev_size = left;
    rebin(c, f.bin, rest, left);
  }
  free_bytes_ -= need;
  if (dirty) dirty_bytes_ -= need;
  c->size_flags = need | kInUse;
  return c;
}

// An aligned object, or a guarded one (the hardened build): placed in the
// chunk, the gap in front (if any) and the rest behind it free chunks.
Chunk* LargeArena::carve_placed(Chunk* c, std::size_t size, std::size_t align, std::uintptr_t* guard) noexcept {
  remove(c);
  auto payload = reinterpret_cast<std::uintptr_t>(c->payload());
  std::uintptr_t at = placement(c, size, align, guarded(), guard);
  if (at != payload) {  // the gap in front stays free
    std::size_t front = at - payload;
    std::uint32_t ms = c->stamp_or(0);
    Chunk* r = Chunk::of(reinterpret_cast<void*>(at));
    r->prev_size = front;
    r->size_flags = (c->size() - front) | (c->size_flags & kDirty);
    r->stamp(ms);
    r->next()->prev_size = r->size();
    c->size_flags = front | (c->size_flags & kDirty);
    insert(c);
    c = r;
  }
  split_tail(c, *guard ? *guard + kGuard - reinterpret_cast<std::uintptr_t>(c) : chunk_size_for(size));
  c->size_flags = c->size() | kInUse;
  return c;
}

void* LargeArena::allocate_plain(std::size_t size) noexcept {
  std::size_t need = chunk_size_for(size);
  acquire();
  Found f = find(need);
  if (!f.chunk) [[unlikely]] {  // a region to map first
    unlock();
    return allocate(size, cfg::kMinAlign, false);
  }
  if (f.chunk->size() == kRegionPayload) --empty_regions_;  // a spare region comes into use
  Chunk* c = carve(f, need);
  ++live_objects_;
  live_bytes_ += c->size();
  purge_if_due(coarse_clock_ms());
  unlock();
  return c->payload();
}

void* LargeArena::allocate(std::size_t size, std::size_t align, bool zero) noexcept {
  std::size_t need = chunk_size_for(size);
  bool placed = align > cfg::kMinAlign || (cfg::kGuardPages && guarded());
  std::size_t search = align > cfg::kMinAlign ? need + align + kMinChunk : need;
  if (cfg::kGuardPages && guarded()) search = need + align + kMinChunk + 2 * kGuard;  // room to place it (placement)
  acquire();
  Found f = find(search);
  if (!f.chunk) {
    if (!add_region()) {
      unlock();
      return nullptr;
    }
    f = find(search);
  }
  // What calloc must clear: the chunk as found (clean or not, and its extent).
  char* found = reinterpret_cast<char*>(f.chunk);
  std::size_t found_size = f.chunk->size();
  // A guarded arena's chunks have held guards; with the mprotect fallback a
  // lifted guard page keeps what it held before: clear those objects in full.
  bool clean = !f.chunk->dirty() && !(cfg::kGuardPages && guarded());
  if (found_size == kRegionPayload) --empty_regions_;  // a spare region comes into use
  std::uintptr_t guard = 0;
  Chunk* c = placed ? carve_placed(f.chunk, size, align, &guard) : carve(f, need);
  ++live_objects_;
  live_bytes_ += c->size();
  purge_if_due(coarse_clock_ms());
  unlock();
  if (guard) (void)protect_guard(guard_of(c), kGuard);
  if (zero) clear_object(static_cast<char*>(c->payload()), size, found, found_size, clean);
  return c->payload();
}

void LargeArena::release(Chunk* c, bool foreign) noexcept {
  // (Checked mode needs the in-use flag exact: no deferring.)
  if (foreign && !checked_mode() && try_defer(c)) return;
  if (!lock.try_lock()) {
    if (!checked_mode()) {
      defer(c);
      return;
    }
    lock.lock();
  }
  release_locked(c);
  unlock();
}

inline void LargeArena::release_locked(Chunk* c) noexcept {
  --live_objects_;
  live_bytes_ -= c->size();
  if (cfg::kLargeQuarantineSlots && guarded()) {
    quarantine_locked(c);
  } else {
    free_locked(c);
  }
}

// c (its pages protected by large_free) joins the quarantine; the oldest
// chunks leave it, read-write again, into the bins, while it holds
// kLargeQuarantineSlots chunks or more than quarantine_limit() bytes with c.
void LargeArena::quarantine_locked(Chunk* c) noexcept {
  std::size_t limit = quarantine_limit();
  while (quarantined_ == kQuarantineRing || (quarantined_ && quarantined_bytes_ + c->size() > limit)) {
    Chunk* oldest = quarantine_[quarantine_first_];
    quarantine_first_ = (quarantine_first_ + 1) % kQuarantineRing;
    --quarantined_;
    quarantined_bytes_ -= oldest->size();
    unprotect_freed(freed_pages_of(oldest), freed_bytes_of(oldest));
    unprotect_guard(guard_of(oldest), kGuard);
    free_locked(oldest);
  }
  quarantine_[(quarantine_first_ + quarantined_) % kQuarantineRing] = c;
  ++quarantined_;
  quarantined_bytes_ += c->size();
}

// Coalesce c with its free neighbours into the bins (or unmap its region).
// The merged chunk takes the place of the neighbour it grows from when its
// size stays in that neighbour's bin (rebin).
inline void LargeArena::free_locked(Chunk* c) noexcept {
  // Each header read once (a neighbour's flags word: a relaxed atomic load,
  // see Chunk).
  std::size_t size = c->size();
  auto* next = reinterpret_cast<Chunk*>(reinterpret_cast<char*>(c) + size);
  std::size_t next_word = next->flags_word();
  std::size_t prev_size = c->prev_size;  // exact: the predecessor's size
  Chunk* prev = prev_size ? reinterpret_cast<Chunk*>(reinterpret_cast<char*>(c) - prev_size) : nullptr;
  std::size_t prev_word = prev ? prev->flags_word() : kInUse;
  if (next_word & kInUse) next = nullptr;
  if (prev_word & kInUse) prev = nullptr;
  std::size_t next_size = next ? next_word & ~kFlagMask : 0;
  if (!prev) prev_size = 0;
  std::size_t merged = size + next_size + prev_size;
  STRATA_ASSERT(c->in_use() && size >= kMinChunk && merged <= kRegionPayload);
  STRATA_ASSERT(!next || next->prev_size == size);  // the boundary tags agree
  STRATA_ASSERT(!prev || prev->size() == prev_size);
  if (merged == kRegionPayload) {
    free_region_chunk(c, size, prev, next);
    return;
  }
  // Counted as removing the neighbours and inserting the merged chunk, dirty.
  free_bytes_ += size;
  dirty_bytes_ += size + (next_word & kDirty ? 0 : next_size) + (prev_word & kDirty ? 0 : prev_size);
  Chunk* head = prev ? prev : c;
  if (prev) {
    if (next) unlink(next, bin_of(next_size));
    rebin(prev, bin_of(prev_size), prev, merged);
    c->size_flags = kAbsorbed;  // an absorbed header reads as "not a chunk"
  } else if (next) {
    rebin(next, bin_of(next_size), c, merged);
  } else {
    link(c, bin_of(merged));
  }
  head->size_flags = merged | kDirty;
  if (next) next->size_flags = kAbsorbed;
  reinterpret_cast<Chunk*>(reinterpret_cast<char*>(head) + merged)->prev_size = merged;
  STRATA_ASSERT(head->next()->in_use());  // coalesced: no free chunk follows a free one
  STRATA_ASSERT(dirty_bytes_ <= free_bytes_);
  // Merged with older dirty neighbours, the chunk counts as dirty from now:
  // what a program keeps freeing and reusing stays warm.
  std::uint32_t now = coarse_clock_ms();
  head->stamp(now);
  note_dirty(now);
  if (dirty_bytes_ > cfg::kLargeDirtyLimit) purge();
  purge_if_due(now);
  if constexpr (STRATA_ASSERTS_ON) verify_now_and_then();
}

// A free that empties its region: the region is unmapped, or kept as a spare.
void LargeArena::free_region_chunk(Chunk* c, std::size_t size, Chunk* prev, Chunk* next) noexcept {
  LargeRegion* region = region_of(c->payload());
  if (next) {
    remove(next);
    size += next->size();
    next->size_flags = kAbsorbed;
  }
  if (prev) {
    remove(prev);
    size += prev->size();
    c->size_flags = kAbsorbed;
    c = prev;
  }
  c->size_flags = size | kDirty;
  c->next()->prev_size = size;
  if (empty_regions_ >= spare_limit()) {
    if (spare_extra_ > 0) --spare_extra_;
    if (unanswered_unmaps_ < cfg::kLargeSpareRegionsMax) ++unanswered_unmaps_;
    regions_.remove(region);
    --region_count_;
    g_large_regions.fetch_sub(1, std::memory_order_relaxed);
    area_remove(region);
    unmap_segment(region);
    return;
  }
  ++empty_regions_;  // kept as a spare
  std::uint32_t now = coarse_clock_ms();
  c->stamp(now);
  insert(c);
  note_dirty(now);
  if (dirty_bytes_ > cfg::kLargeDirtyLimit) purge();
  purge_if_due(now);
}

// Discard the pages inside dirty free chunks (their header and links stay),
// the biggest first, until kLargeDirtyKept bytes are left dirty: the small
// ones are the likeliest to be taken again soon, and a thread-churn program
// that frees its large objects at a thread's end and callocs them again in the
// next thread faults in only what went over (stress2, issue 20).
void LargeArena::purge() noexcept {
  for (std::uint64_t first = first_map_; first && dirty_bytes_ > cfg::kLargeDirtyKept;) {
    unsigned fl = 63u - static_cast<unsigned>(__builtin_clzll(first));
    first &= ~(std::uint64_t{1} << fl);
    for (std::uint32_t second = second_map_[fl]; second && dirty_bytes_ > cfg::kLargeDirtyKept;) {
      unsigned sl = 31u - static_cast<unsigned>(__builtin_clz(second));
      second &= ~(1u << sl);
      for (Chunk* c = bins_[fl][sl].front(); c && dirty_bytes_ > cfg::kLargeDirtyKept; c = FreeBin::next(c)) {
        if (c->dirty()) purge_chunk(c);
      }
    }
  }
}

void LargeArena::purge_chunk(Chunk* c) noexcept {
  auto inner = reinterpret_cast<std::uintptr_t>(c) + kPurgeFrom;
  auto end = reinterpret_cast<std::uintptr_t>(c) + c->size();
  if (page_up(inner) < page_down(end)) discard_in_region(reinterpret_cast<void*>(inner), end - inner);
  c->size_flags &= ~kDirty;
  dirty_bytes_ -= c->size();
}

// Every free chunk is looked at (the bins keep no age order), so a walk
// comes at most twice a delay: the chunks it leaves are counted as at least
// half a delay old.
void LargeArena::purge_aged(std::uint32_t now) noexcept {
  std::uint32_t delay = purge_delay_ms();
  std::uint32_t oldest = now;
  bool waiting = false;
  for (std::uint64_t first = dirty_bytes_ ? first_map_ : 0; first; first &= first - 1) {
    unsigned fl = static_cast<unsigned>(__builtin_ctzll(first));
    for (std::uint32_t second = second_map_[fl]; second; second &= second - 1) {
      unsigned sl = static_cast<unsigned>(__builtin_ctz(second));
      for (Chunk* c = bins_[fl][sl].front(); c; c = FreeBin::next(c)) {
        if (!c->dirty()) continue;
        std::uint32_t at = c->stamp_or(now - delay);
        if (now - at >= delay) {
          purge_chunk(c);
        } else {
          if (now - at > now - oldest) oldest = at;
          waiting = true;
        }
      }
    }
  }
  if (now - oldest > delay / 2) oldest = now - delay / 2;
  oldest_dirty_ms_.store(oldest, std::memory_order_relaxed);
  dirty_waiting_.store(waiting, std::memory_order_relaxed);
}

// In place, in a guarded arena: the guard is lifted, the chunk shrinks or
// takes in its free successor, and a guard goes after the new page-rounded end. Sizes below cfg::kLargeGuardMin move to
// the unguarded arenas (the caller copies).
bool LargeArena::resize_guarded(Chunk* c, std::size_t size) noexcept {
  if (size < cfg::kLargeGuardMin) return false;
  auto start = reinterpret_cast<std::uintptr_t>(c);
  std::size_t need = page_up(start + kHeader + size) + kGuard - start;
  acquire();
  std::size_t have = c->size();
  Chunk* next = c->next();
  bool ok = need <= have || (!next->in_use() && have + next->size() >= need);
  if (ok) {
    unprotect_guard(guard_of(c), kGuard);
    (void)resize_locked(c, need);
    (void)protect_guard(guard_of(c), kGuard);
  }
  unlock();
  return ok;
}

bool LargeArena::resize(Chunk* c, std::size_t size) noexcept {
  if (cfg::kGuardPages && guarded()) return resize_guarded(c, size);
  if (cfg::kGuardPages && size >= cfg::kLargeGuardMin) return false;  // to a guarded arena
  acquire();
  bool ok = resize_locked(c, chunk_size_for(size));
  unlock();
  return ok;
}

// Chunk c holds `need` bytes, shrunk or grown into its free successor, if it can.
bool LargeArena::resize_locked(Chunk* c, std::size_t need) noexcept {
  std::size_t have = c->size();
  bool ok = true;
  if (need <= have) {
    split_tail(c, need);
  } else if (Chunk* next = c->next(); !next->in_use() && have + next->size() >= need) {
    remove(next);
    c->size_flags = (have + next->size()) | kInUse;
    next->size_flags = kAbsorbed;
    c->next()->prev_size = c->size();
    split_tail(c, need);
  } else {
    ok = false;
  }
  live_bytes_ = live_bytes_ - have + c->size();
  return ok;
}

namespace {

// p's chunk header is sound but the next chunk's boundary tag disagrees: a
// live object's writes ran past its end into the next header (a heap
// overflow); otherwise p is no chunk of ours.
[[noreturn]] void report_torn_tags(std::size_t word, Use use, const void* p) noexcept {
  if ((word & kInUse) && !(word & kFreeing)) report_misuse("heap overflow past", p);
  report_invalid(use, p);
}

// The checks of every build, without the lock: p must be the payload of a
// chunk whose boundary tags agree (its size leads to a chunk that names it as
// its predecessor) and that is in use and not being freed. Reads only words
// of the region, which stays mapped while it holds a live object.
Chunk* large_live_chunk(const void* p, Use use) noexcept {
  LargeRegion* region = region_of(p);
  auto addr = reinterpret_cast<std::uintptr_t>(p);
  auto lo = reinterpret_cast<std::uintptr_t>(first_chunk(region)) + kHeader;
  auto hi = reinterpret_cast<std::uintptr_t>(region) + cfg::kSegmentSize - kHeader;
  if (addr < lo || addr >= hi || addr % cfg::kMinAlign != 0) report_invalid(use, p);
  Chunk* c = Chunk::of(p);
  std::size_t word = c->flags_word();
  if (word == kAbsorbed) report_freed(use, p);  // coalesced into a free neighbour
  std::size_t size = word & ~kFlagMask;
  if (size < kMinChunk || size > hi - addr + kHeader) report_invalid(use, p);
  if (c->next()->prev_size != size) report_torn_tags(word, use, p);
  if (!(word & kInUse) || (word & kFreeing)) report_freed(use, p);
  return c;
}

}  // namespace

LargeArena& large_arena(std::size_t number) noexcept { return g_arenas[number % cfg::kLargeArenas]; }

void* large_malloc(LargeArena& arena, std::size_t size, std::size_t align) noexcept {
  LargeArena& a = arena_for(arena, size);
  if (align <= cfg::kMinAlign && !(cfg::kGuardPages && a.guarded())) return a.allocate_plain(size);
  return a.allocate(size, align, false);
}

void* large_calloc(LargeArena& arena, std::size_t size) noexcept {
  return arena_for(arena, size).allocate(size, cfg::kMinAlign, true);
}

void large_free(void* p, const LargeArena& mine) noexcept {
  Chunk* c = large_live_chunk(p, Use::kFree);
  // Claim the free: of two racing frees of one object, only one goes on.
  if (__atomic_fetch_or(&c->size_flags, kFreeing, __ATOMIC_RELAXED) & kFreeing) report_freed(Use::kFree, p);
  LargeArena* home = region_of(p)->arena;
  if (cfg::kGuardPages && home->guarded()) {
    if constexpr (cfg::kLargeQuarantineSlots > 0) {
      erase_freed_start(c, p);
      (void)protect_freed(freed_pages_of(c), freed_bytes_of(c));  // quarantined by release
    } else {
      unprotect_guard(guard_of(c), kGuard);  // before it can coalesce
    }
  } else if (c->size() >= cfg::kEraseFrom && first_free_of_its_size(c->size())) {  // glibc's unmap of its first big chunks
    discard_in_region(c->payload(), c->size() - kHeader);  // c is still flagged in use: no one else touches it
  }
  home->release(c, home != &mine && home != &arena_for(mine, cfg::kLargeGuardMin));
}

LargeArena& large_arena_of(const void* p) noexcept { return *region_of(p)->arena; }

bool large_region_has_huge_pages(const void* p) noexcept { return region_of(p)->huge_pages; }

void large_purge_if_due(std::uint32_t now) noexcept {
  for_each_arena([now](LargeArena& arena) {
    if (arena.purge_due(now)) arena.try_purge_aged(now);
  });
}

std::size_t large_deferred_bytes() noexcept {
  std::size_t bytes = 0;
  for_each_arena([&bytes](LargeArena& arena) { bytes += arena.deferred_bytes(); });
  return bytes;
}

std::size_t large_usable_size(const void* p) noexcept { return usable_size_of(Chunk::of(p)); }

std::size_t large_checked_usable_size(const void* p, Use use) noexcept {
  return usable_size_of(large_live_chunk(p, use));
}

bool large_resize(void* p, std::size_t size) noexcept {
  return region_of(p)->arena->resize(Chunk::of(p), size);
}

void large_check(const void* p) noexcept {
  LargeRegion* region = region_of(p);
  auto addr = reinterpret_cast<std::uintptr_t>(p);
  auto lo = reinterpret_cast<std::uintptr_t>(first_chunk(region)) + kHeader;
  auto hi = reinterpret_cast<std::uintptr_t>(region) + cfg::kSegmentSize - kHeader;
  if (addr < lo || addr >= hi || addr % cfg::kMinAlign != 0)
    report_misuse("free(): pointer was not allocated by strata (inside a large region):", p);
  LargeArena* arena = region->arena;
  arena->lock.lock();
  Chunk* c = Chunk::of(p);
  std::size_t size = c->size();
  bool valid = size >= kMinChunk && addr - kHeader + size <= hi + kHeader && c->next()->prev_size == size;
  bool live = valid && c->in_use();
  arena->lock.unlock();
  if (!valid) report_misuse("free(): pointer is not a live large object (double free or invalid pointer):", p);
  if (!live) report_misuse("double free of", p);
}

// Every region chunk by chunk against the bins, the bitmaps and the counts.
const char* LargeArena::verify() noexcept {
  std::size_t free_bytes = 0, dirty_bytes = 0, free_chunks = 0, empty = 0;
  for (LargeRegion& region : regions_) {
    std::size_t before = 0, offset = 0;
    bool before_free = false;
    Chunk* c = first_chunk(&region);
    for (; offset < kRegionPayload; c = c->next()) {
      std::size_t size = c->size();
      if (c->prev_size != before) return "a chunk's prev_size is not its predecessor's size";
      if (size < kMinChunk || size > kRegionPayload - offset) return "a chunk's size leaves its region";
      if (!c->in_use()) {
        if (before_free) return "two free chunks side by side (not coalesced)";
        Bin b = bin_of(size);
        bool listed = false;
        for (Chunk* x = bins_[b.fl][b.sl].front(); x && !listed; x = FreeBin::next(x)) listed = x == c;
        if (!listed) return "a free chunk is not in its size's bin";
        free_bytes += size;
        if (c->dirty()) dirty_bytes += size;
        ++free_chunks;
        if (size == kRegionPayload) ++empty;
      }
      before_free = !c->in_use();
      before = size;
      offset += size;
    }
    if (offset != kRegionPayload || !c->in_use() || c->prev_size != before) return "the chunks do not end at the sentinel";
  }
  std::size_t binned = 0;
  for (unsigned fl = 0; fl < kFirstLevel; ++fl) {
    if (((first_map_ >> fl) & 1) != (second_map_[fl] != 0)) return "the first-level bitmap disagrees with the second";
    for (unsigned sl = 0; sl < kSecondLevel; ++sl) {
      if (((second_map_[fl] >> sl) & 1) != !bins_[fl][sl].empty()) return "a bitmap bit disagrees with its bin";
      for (Chunk* x = bins_[fl][sl].front(); x; x = FreeBin::next(x)) {
        if (FreeBin::next(x) && FreeBin::prev(FreeBin::next(x)) != x) return "a bin's links disagree";
        if (!(bin_of(x->size()) == Bin{fl, sl})) return "a chunk is in another size's bin";
        ++binned;
      }
    }
  }
  if (binned != free_chunks) return "a bin holds a chunk that is not free";
  if (free_bytes != free_bytes_ || dirty_bytes != dirty_bytes_) return "the free or dirty byte count is off";
  if (empty != empty_regions_) return "the count of empty regions is off";
  return nullptr;
}

const char* large_verify() noexcept {
  const char* problem = nullptr;
  for_each_arena([&problem](LargeArena& arena) {
    arena.acquire();  // releases deferred frees first
    if (!problem) problem = arena.verify();
    arena.unlock();
  });
  return problem;
}

LargeStats large_stats() noexcept {
  LargeStats s;
  for_each_arena([&s](LargeArena& arena) { s = large_arena_stats(arena, s); });
  return s;
}

LargeStats large_arena_stats(LargeArena& arena, LargeStats s) noexcept {
  arena.acquire();  // releases deferred frees first: the figures are exact
  arena.add_stats(s);
  arena.unlock();
  return s;
}

void large_lock_all() noexcept {
  for_each_arena([](LargeArena& arena) { arena.lock.lock(); });
}

void large_unlock_all() noexcept {
  for_each_arena([](LargeArena& arena) { arena.lock.unlock(); });
}

}  // namespace strata::malloc_detail
