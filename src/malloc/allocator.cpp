// libstrata — a drop-in malloc on the Vam design (Feng & Berger 2005), with
// thread heaps. The allocator as a chain of layers, from the OS up:
//
//   OS layer (os.hpp)          segments: 4 MiB areas aligned to 4 MiB, madvise,
//                              the area map (Vam's area table)
//   ├─ SmallSegment            page blocks of 64 KiB, descriptors in page 0
//   │  (segment.hpp)           BIBOP: no object headers, size from the descriptor
//   │  └─ Heap (thread_heap)   one per thread, no lock: per class an available
//   │                          and a full list (ordered per-size allocation), reap
//   │                          allocation inside a block, empty-block LRU, remote
//   │                          frees through an atomic list per block
//   ├─ LargeArena (large_heap) shared regions, boundary tags, segregated good fit,
//   │                          splitting, immediate coalescing; locked
//   └─ huge (huge_heap)        runs of segments in reserved regions, a cache of resident pages
//   allocator.cpp (this file)  SizeDispatch by request size on malloc and by
//                              segment kind on free; realloc/calloc/aligned in C
//                              semantics; start-up, environment, fork, checked mode
//
// The layers are concrete classes, not a template mixin chain: the fast paths
// below reach into Heap and Page directly (a thread-local load, a table
// lookup, a pointer bump) and a mixin chain would hide exactly the data layout
// that makes them fast. Each layer still has one job and its own file.
#include "allocator.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "checked.hpp"
#include "config.hpp"
#include "huge_heap.hpp"
#include "large_heap.hpp"
#include "os.hpp"
#include "report.hpp"
#include "segment.hpp"
#include "size_classes.hpp"
#include "thread_heap.hpp"

extern char** environ;

namespace strata::malloc_detail {

#define STRATA_LIKELY(x) __builtin_expect(!!(x), 1)
#define STRATA_UNLIKELY(x) __builtin_expect(!!(x), 0)

std::atomic<bool> g_checked{false};

namespace {

// The heap of threads without one (see Heap::NoThreadTag).
constinit Heap g_no_heap{Heap::NoThreadTag{}};

// The calling thread's heap, &g_no_heap until its first allocation claims one.
// initial-exec: a plain %fs-relative load, and no call into the dynamic loader
// (which could itself call malloc).
thread_local Heap* tl_heap __attribute__((tls_model("initial-exec"))) = &g_no_heap;

constexpr std::size_t kMaxRequest = std::size_t{1} << 62;  // beyond: ENOMEM without asking the OS

// ---- start-up, environment, thread exit, fork ---------------------------------

std::atomic<int> g_init_state{0};  // 0: not yet, 1: running, 2: done
bool g_show_stats = false;
bool g_verbose = false;
int g_stats_fd = 2;
pthread_key_t g_thread_key;
std::atomic<bool> g_thread_key_ready{false};

void on_thread_exit(void* value) noexcept {
  auto* heap = static_cast<Heap*>(value);
  // Frees after this point (other destructors) take the remote path; a malloc
  // claims a heap again and re-arms this destructor.
  if (tl_heap == heap) tl_heap = &g_no_heap;
  heap_abandon(heap);
}

void fork_prepare() noexcept {
  heaps_lock();
  large_lock_all();
  huge_lock();
}
void fork_release() noexcept {  // parent and child: the forking thread holds every lock
  huge_unlock();
  large_unlock_all();
  heaps_unlock();
}

struct Setting {
  const char* name;
  bool* flag;
  std::atomic<bool>* atomic_flag;
};

// The other parts of strata name their variables with these prefixes (the lab,
// the reaps, the benchmarks, the test suite); libstrata leaves them alone.
constexpr const char* kForeignPrefixes[] = {"STRATA_LAB_", "STRATA_REAP_", "STRATA_BENCH_", "STRATA_TEST_"};

bool starts_with(const char* s, const char* prefix) noexcept {
  while (*prefix)
    if (*s++ != *prefix++) return false;
  return true;
}

// Compare an environment entry "NAME=value" with a name; on a match, point at the value.
bool entry_is(const char* entry, const char* name, const char** value) noexcept {
  std::size_t n = std::strlen(name);
  if (std::strncmp(entry, name, n) != 0 || entry[n] != '=') return false;
  *value = entry + n + 1;
  return true;
}

void read_environment() noexcept {
  Setting settings[] = {{"STRATA_SHOW_STATS", &g_show_stats, nullptr},
                        {"STRATA_VERBOSE", &g_verbose, nullptr},
                        {"STRATA_CHECK", nullptr, &g_checked}};
  for (char** env = environ; env && *env; ++env) {
    const char* entry = *env;
    if (!starts_with(entry, "STRATA_")) continue;
    bool known = false;
    const char* value = nullptr;
    for (Setting& s : settings) {
      if (!entry_is(entry, s.name, &value)) continue;
      known = true;
      bool on = std::strcmp(value, "1") == 0;
      if (!on && std::strcmp(value, "0") != 0 && *value != '\0') {
        Report().str("strata: ").str(entry).str(": expected 0 or 1; ").str(s.name).str(" stays off\n");
        break;
      }
      if (s.flag) *s.flag = on;
      if (s.atomic_flag) s.atomic_flag->store(on, std::memory_order_relaxed);
    }
    for (const char* prefix : kForeignPrefixes) known = known || starts_with(entry, prefix);
    if (!known) {
      Report r;
      r.str("strata: unknown environment variable ");
      for (const char* c = entry; *c && *c != '='; ++c) r.put(*c);
      r.str(" (libstrata reads STRATA_SHOW_STATS, STRATA_VERBOSE, STRATA_CHECK)\n");
    }
  }
}

void print_config() noexcept {
  Report r;
  r.str("strata: libstrata configuration\n");
  r.str("  segment ").bytes(cfg::kSegmentSize).str(", page block ").bytes(cfg::kPageSize).str("\n");
  r.str("  small classes: ").num(kClassCount).str(" (16 B apart up to ").num(cfg::kExactMax).str(" B, then ")
      .num(cfg::kClassesPerDoubling).str(" per doubling up to ").num(cfg::kSmallMax).str(" B)\n");
  r.str("  large objects up to ").bytes(cfg::kLargeMax).str(" in ").num(cfg::kLargeArenas).str(" arenas; huge beyond\n");
  r.str("  retained empty blocks per thread ").num(cfg::kRetainedEmptyPages).str(" to ").num(cfg::kRetainedEmptyMax)
      .str(" (by demand), in abandoned heaps ").num(cfg::kAbandonedRetainedMax).str(", large dirty limit ")
      .bytes(cfg::kLargeDirtyLimit).str(", huge cache ").bytes(cfg::kHugeCacheBytes).str("\n");
  r.str("  checked mode ").str(checked_mode() ? "on" : "off").str(cfg::kAlwaysChecked ? " (built in)" : "")
      .str(", statistics at exit ").str(g_show_stats ? "on" : "off").str("\n");
}

// Idempotent; tolerates re-entry (pthread_atfork may call malloc while it runs:
// the allocator works before and during initialization, which only reads the
// environment and registers hooks).
void ensure_initialized() noexcept {
  if (STRATA_LIKELY(g_init_state.load(std::memory_order_acquire) == 2)) return;
  int expected = 0;
  if (!g_init_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return;
  if (!environ) {  // too early (the dynamic loader); try again on a later call
    g_init_state.store(0, std::memory_order_release);
    return;
  }
  read_environment();
  if (g_show_stats) {
    // Programs such as coreutils close stderr in an atexit handler, before the
    // statistics are printed: keep a private copy (close-on-exec, high number).
    int fd = ::fcntl(2, F_DUPFD_CLOEXEC, 200);
    if (fd >= 0) g_stats_fd = fd;
  }
  if (pthread_key_create(&g_thread_key, on_thread_exit) == 0) g_thread_key_ready.store(true, std::memory_order_release);
  pthread_atfork(fork_prepare, fork_release, fork_release);
  if (g_verbose) print_config();
  g_init_state.store(2, std::memory_order_release);
}

__attribute__((constructor)) void initialize_at_load() { ensure_initialized(); }
__attribute__((destructor)) void report_at_exit() {
  if (g_show_stats) print_stats_to(g_stats_fd);
}

Heap* thread_heap() noexcept {
  if (Heap* heap = tl_heap; heap != &g_no_heap) return heap;
  ensure_initialized();
  if (Heap* heap = tl_heap; heap != &g_no_heap) return heap;  // initialization allocated, and claimed one
  Heap* heap = heap_claim();
  if (!heap) {
    errno = ENOMEM;
    return nullptr;
  }
  tl_heap = heap;  // before setspecific, which may itself allocate
  if (g_thread_key_ready.load(std::memory_order_acquire)) pthread_setspecific(g_thread_key, heap);
  return heap;
}

// ---- size dispatch ------------------------------------------------------------

bool fits_large(std::size_t size, std::size_t align) noexcept {
  return size <= cfg::kLargeMax && (align <= cfg::kMinAlign || size + align <= cfg::kLargeMax);
}

void* allocate_big(std::size_t size, std::size_t align, bool* zeroed) noexcept {
  if (size > kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  if (fits_large(size, align)) {
    *zeroed = false;
    void* p = large_malloc(large_arena(tl_heap->number), size, align);
    if (!p) errno = ENOMEM;
    return p;
  }
  return huge_malloc(size, align, zeroed);
}

__attribute__((noinline)) void* allocate_slow(std::size_t size) noexcept {
  if (size <= cfg::kSmallMax) {
    Heap* heap = thread_heap();
    if (!heap) return nullptr;
    void* p = heap->malloc_small(class_of(size));
    if (!p) errno = ENOMEM;
    return p;
  }
  bool zeroed;
  return allocate_big(size, cfg::kMinAlign, &zeroed);
}

// Checked mode: is p something strata handed out and has not taken back?
// `freeing`: p is about to be freed (a small object gets the freed cookie).
void check_pointer(void* p, bool freeing) noexcept {
  if (reinterpret_cast<std::uintptr_t>(p) % sizeof(void*) != 0 || !area_contains(reinterpret_cast<void*>(segment_base(p))))
    report_misuse("free(): pointer was not allocated by strata:", p);
  SegmentHeader* seg = segment_of(p);
  switch (seg->kind) {
    case SegmentKind::kSmall: {
      auto* small = reinterpret_cast<SmallSegment*>(seg);
      check_small_free(small, small->page_of(p), p, small->header.owner == tl_heap, freeing);
      return;
    }
    case SegmentKind::kLarge:
      large_check(p);
      return;
    case SegmentKind::kHuge:
      return;
  }
  report_misuse("free(): pointer is not a live object (double free of a huge object, or invalid):", p);
}

// free() of anything but an object of the calling thread's own small blocks.
__attribute__((noinline)) void deallocate_other(SegmentHeader* seg, void* p) noexcept {
  if (seg->kind == SegmentKind::kSmall) {
    auto* small = reinterpret_cast<SmallSegment*>(seg);
    free_remote(small, small->page_of(p), p);
  } else if (seg->kind == SegmentKind::kLarge) {
    large_free(p, large_arena(tl_heap->number));
  } else {
    huge_free(p);
  }
}

// The body of free() once p is known not to be NULL.
inline __attribute__((always_inline)) void deallocate_nonnull(void* p) noexcept {
  SegmentHeader* seg = segment_of(p);
  Heap* heap = tl_heap;
  // Only a small segment has an owner, and tl_heap is never nullptr: a match
  // proves both the kind and the ownership in one compare. A thread without a
  // heap (new or exiting) has &g_no_heap, which owns nothing: the remote path.
  if (STRATA_LIKELY(seg->owner == heap)) {
    Page* page = reinterpret_cast<SmallSegment*>(seg)->page_of(p);
    if (STRATA_LIKELY(page->flags == 0)) {
      auto* b = static_cast<FreeBlock*>(p);
      b->next = page->free;
      page->free = b;
      if (STRATA_UNLIKELY(--page->until_trigger == 0) && page != heap->current[page->cls]) heap->on_trigger(page);
      return;
    }
    heap->free_local_slow(page, p);
    return;
  }
  deallocate_other(seg, p);
}

__attribute__((noinline)) void deallocate_checked(void* p) noexcept {
  check_pointer(p, true);
  deallocate_nonnull(p);
}

std::size_t small_usable_size(SmallSegment* seg, const void* p) noexcept {
  Page* page = seg->page_of(p);
  return static_cast<std::size_t>(page->object_start(p) + page->block_size - static_cast<const char*>(p));
}

}  // namespace

void report_misuse(const char* what, const void* p) noexcept {
  Report().str("strata: ").str(what).put(' ').ptr(p).put('\n');
  std::abort();
}

// ---- the fast paths -------------------------------------------------------------

void* allocate(std::size_t size) noexcept {
  if (STRATA_LIKELY(size <= cfg::kSmallMax)) {
    Page* page = tl_heap->current[class_of(size)];
    char* p = page->bump;
    if (STRATA_LIKELY(p != page->bump_end)) {  // reap: fresh memory first
      page->bump = p + page->block_size;
      ++page->until_trigger;
      return p;
    }
    if (FreeBlock* b = page->free; STRATA_LIKELY(b != nullptr)) {  // then the block's free list
      page->free = b->next;
      ++page->until_trigger;
      return b;
    }
  }
  return allocate_slow(size);
}

void deallocate(void* p) noexcept {
  if (!p) return;
  if (STRATA_UNLIKELY(checked_mode())) return deallocate_checked(p);
  deallocate_nonnull(p);
}

// ---- the rest of the C API -----------------------------------------------------------

void* allocate_zeroed(std::size_t count, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (total <= cfg::kSmallMax) {
    void* p = allocate(total);
    if (p) std::memset(p, 0, total);
    return p;
  }
  bool zeroed = false;
  void* p = allocate_big(total, cfg::kMinAlign, &zeroed);
  if (p && !zeroed) std::memset(p, 0, total);
  return p;
}

std::size_t usable_size(const void* p) noexcept {
  if (!p) return 0;
  SegmentHeader* seg = segment_of(p);
  switch (seg->kind) {
    case SegmentKind::kSmall:
      return small_usable_size(reinterpret_cast<SmallSegment*>(seg), p);
    case SegmentKind::kLarge:
      return large_usable_size(p);
    case SegmentKind::kHuge:
      return huge_usable_size(p);
  }
  return 0;
}

void* reallocate(void* p, std::size_t size) noexcept {
  if (!p) return allocate(size);
  if (size > kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  SegmentHeader* seg = segment_of(p);
  if (STRATA_UNLIKELY(checked_mode())) check_pointer(p, false);  // realloc of a freed or foreign pointer
  std::size_t have;
  switch (seg->kind) {
    case SegmentKind::kSmall:
      have = small_usable_size(reinterpret_cast<SmallSegment*>(seg), p);
      if (size <= have && size >= have / 2) return p;  // same class or close enough
      break;
    case SegmentKind::kLarge:
      if (size > cfg::kSmallMax && size <= cfg::kLargeMax && large_resize(p, size)) return p;
      have = large_usable_size(p);
      break;
    case SegmentKind::kHuge:
    default:
      if (size > cfg::kLargeMax) {
        if (huge_resize(p, size)) return p;
        if (void* q = huge_move(p, size)) return q;
      }
      have = huge_usable_size(p);
      break;
  }
  void* q = allocate(size);
  if (!q) return nullptr;  // errno ENOMEM; p is untouched
  std::memcpy(q, p, size < have ? size : have);
  deallocate(p);
  return q;
}

void* reallocate_array(void* p, std::size_t count, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return reallocate(p, total);
}

void* allocate_aligned(std::size_t align, std::size_t size) noexcept {
  if (align == 0 || (align & (align - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  if (align <= cfg::kMinAlign) return allocate(size);
  // A zero-byte object still needs a byte of its own: carved from a padded
  // block, its aligned pointer could otherwise be that block's end, which is
  // the next object's start (and freeing it would free the neighbour).
  if (size == 0) size = 1;
  if (size > kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  if (size <= cfg::kSmallMax && align < cfg::kPageSize) {
    // Page blocks start kPageSize-aligned, so a class that is a multiple of the
    // alignment gives aligned objects as they are.
    if (kClassSize[class_of(size)] % align == 0) return allocate(size);
    std::size_t padded = size + align - cfg::kMinAlign;
    if (padded <= cfg::kSmallMax) {
      void* p = allocate(padded);
      if (!p) return nullptr;
      auto addr = reinterpret_cast<std::uintptr_t>(p);
      auto aligned = (addr + align - 1) & ~(align - 1);
      if (aligned != addr) {
        auto* seg = reinterpret_cast<SmallSegment*>(segment_of(p));
        // Our own block (the allocation came from this thread's heap), so we are
        // the only writer; atomic because freeing threads read it (free_remote).
        Page* page = seg->page_of(p);
        __atomic_store_n(&page->flags, static_cast<std::uint8_t>(page->flags | kPageInterior), __ATOMIC_RELAXED);
      }
      return reinterpret_cast<void*>(aligned);
    }
  }
  bool zeroed;
  return allocate_big(size, align, &zeroed);
}

void* allocate_memalign(std::size_t align, std::size_t size) noexcept {
  if (align > (std::size_t{1} << 62)) {
    errno = EINVAL;
    return nullptr;
  }
  std::size_t a = cfg::kMinAlign;  // glibc: any alignment, rounded up to a power of two
  while (a < align) a <<= 1;
  return allocate_aligned(a, size);
}

int posix_memalign(void** out, std::size_t align, std::size_t size) noexcept {
  if (align < sizeof(void*) || (align & (align - 1)) != 0) return EINVAL;
  int saved = errno;
  void* p = allocate_aligned(align, size);
  if (!p) {
    int error = errno;
    errno = saved;
    return error == EINVAL ? EINVAL : ENOMEM;
  }
  *out = p;
  return 0;
}

void* allocate_page_aligned(std::size_t size) noexcept {
  return allocate_aligned(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), size);
}

void* allocate_page_multiple(std::size_t size) noexcept {
  std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (size > kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  std::size_t rounded = size == 0 ? page : (size + page - 1) & ~(page - 1);
  return allocate_aligned(page, rounded);
}

// ---- statistics -------------------------------------------------------------------

void print_stats() noexcept { print_stats_to(2); }

void print_stats_to(int fd) noexcept {
  struct ClassTotals {
    std::size_t blocks = 0, os_pages = 0, live = 0;
  };
  ClassTotals totals[kClassCount];
  std::size_t heaps = 0, abandoned = 0, retained = 0, largest_limit = 0;
  // Read without the owners' cooperation: exact at exit, approximate while
  // other threads run (statistics, not bookkeeping).
  for (Heap* heap = heap_registry_head(); heap; heap = heap->next_heap) {
    ++heaps;
    abandoned += heap->abandoned;
    retained += heap->empty_pages.count;
    if (heap->retain_limit > largest_limit) largest_limit = heap->retain_limit;
    for (std::size_t cls = 0; cls < kClassCount; ++cls) {
      for (PageList* list : {&heap->queues[cls].available, &heap->queues[cls].full}) {
        for (Page* page = list->head; page; page = page->next) {
          std::size_t bumped = static_cast<std::size_t>(page->bump - page->start());
          std::size_t reached = (bumped + cfg::kOsPageSize - 1) / cfg::kOsPageSize;
          totals[cls].blocks += 1;
          totals[cls].os_pages += reached > page->touched_pages ? reached : page->touched_pages;
          totals[cls].live += std::size_t{page->used()} * page->block_size;
        }
      }
    }
  }
  Report r(fd);
  r.str("strata: statistics (pid ").num(static_cast<std::uint64_t>(::getpid())).str(")\n");
  r.str("  class    size  blocks  os-pages    live-bytes\n");
  std::size_t small_live = 0;
  for (std::size_t cls = 0; cls < kClassCount; ++cls) {
    if (!totals[cls].blocks) continue;
    small_live += totals[cls].live;
    r.str("  ").num(cls, 5).num(kClassSize[cls], 8).num(totals[cls].blocks, 8).num(totals[cls].os_pages, 10)
        .num(totals[cls].live, 14).put('\n');
  }
  r.str("  small: live ").bytes(small_live).str(", thread heaps ").num(heaps).str(" (").num(abandoned)
      .str(" abandoned), retained empty blocks ").num(retained).str(" (").num(abandoned_kept_blocks())
      .str(" kept by abandoned heaps; largest retain limit ").num(largest_limit).str("), empty blocks adopted by new threads ")
      .num(handed_over_blocks()).str(", blocks reclaimed by freeing threads ").num(reclaimed_blocks()).put('\n');
  LargeStats large = large_stats();
  r.str("  large: regions ").num(large.regions).str(", live ").num(large.live_objects).str(" objects (")
      .bytes(large.live_bytes).str("), free ").bytes(large.free_bytes).str(", spare regions kept per arena up to ")
      .num(large.largest_spare_limit).put('\n');
  HugeStats huge = huge_stats();
  r.str("  huge: live ").num(huge.live_objects).str(" objects (").bytes(huge.live_bytes).str(" mapped), cached ")
      .bytes(huge.cached_bytes).str(" in ").num(huge.cache_entries).str(" runs, reused from the cache ")
      .bytes(huge.reused_bytes).str(", pages moved ").bytes(huge.moved_bytes).str(", discarded ")
      .bytes(huge.discarded_bytes).str(", fresh ").bytes(huge.fresh_bytes).str(", grown in place ").num(huge.grown_in_place).str(" times, regions ")
      .bytes(huge.reserved_bytes).put('\n');
  struct rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  r.str("  mapped now ").bytes(mapped_bytes()).str(", peak RSS ").bytes(static_cast<std::uint64_t>(usage.ru_maxrss) * 1024)
      .str(", pages discarded ").num(discarded_os_pages()).str(" (").bytes(discarded_os_pages() * cfg::kOsPageSize)
      .str(")\n");
}

}  // namespace strata::malloc_detail
