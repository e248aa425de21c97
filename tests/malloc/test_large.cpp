// Inside libstrata (src/malloc headers): large objects coalesce back into
// whole regions; empty page blocks are discarded with hysteresis.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "config.hpp"
#include "huge_heap.hpp"
#include "large_heap.hpp"
#include "options.hpp"
#include "os.hpp"
#include "per_thread_heap.hpp"
#include "segment.hpp"
#include "strata/strata.h"

namespace {

namespace cfg = strata::malloc_config;
using strata::malloc_detail::large_stats;

// The retain limit's rules on their own: no purge delay while it lives
// (test_purge.cpp tests the delay).
struct NoPurgeDelay {
  std::uint32_t saved = strata::malloc_detail::g_purge_delay_ms.exchange(0);
  ~NoPurgeDelay() { strata::malloc_detail::g_purge_delay_ms.store(saved); }
};

TEST(StrataLarge, FreedNeighboursCoalesceIntoOneChunk) {
  // In a fresh thread, so that the objects come from one arena in order.
  std::thread([] {
    auto before = large_stats();
    std::vector<void*> objects;
    for (int i = 0; i < 30; ++i) objects.push_back(strata_malloc(100000 + static_cast<std::size_t>(i) * 1000));
    std::mt19937 rng(4);
    std::shuffle(objects.begin(), objects.end(), rng);
    for (void* p : objects) strata_free(p);
    auto after = large_stats();
    EXPECT_EQ(after.live_objects, before.live_objects);
    // 30 neighbours (3.4 MB in a 4 MiB region), freed in random order: only
    // coalescing leaves a free chunk that big (the region's tail was < 1 MB).
    EXPECT_GE(after.largest_free, std::size_t{3400000});
    void* big = strata_malloc(cfg::kLargeMax);
    ASSERT_NE(big, nullptr);
    strata_free(big);
    EXPECT_EQ(large_stats().regions, after.regions) << "the coalesced space holds the largest large object";
  }).join();
}

// Large objects that come and go by whole regions (thread churn): an arena
// that maps a region again after unmapping one keeps more spare regions, until
// a round neither maps nor unmaps.
TEST(StrataLarge, AnArenaThatMapsRegionsAgainKeepsMoreSpares) {
  std::thread([] {
    constexpr std::size_t kRegions = 6;
    static_assert(kRegions > cfg::kLargeSpareRegions && kRegions <= cfg::kLargeSpareRegionsMax);
    auto round = [] {  // returns the bytes the allocations had to map
      std::size_t before = strata::malloc_detail::mapped_bytes();
      std::vector<void*> objects;  // two 1.5 MiB objects fill a 4 MiB region
      for (std::size_t i = 0; i < 2 * kRegions; ++i) objects.push_back(strata_malloc(1536 * 1024));
      std::size_t grown = strata::malloc_detail::mapped_bytes() - before;
      for (void* p : objects) strata_free(p);
      return grown;
    };
    for (int i = 0; i < 4; ++i) round();
    std::size_t mapped = strata::malloc_detail::mapped_bytes();
    EXPECT_EQ(round(), 0u) << "the last round had to map regions again";
    EXPECT_EQ(strata::malloc_detail::mapped_bytes(), mapped) << "the last round unmapped regions";
    EXPECT_GT(large_stats().largest_spare_limit, cfg::kLargeSpareRegions);
  }).join();
}

// A thread that allocates from another arena frees a large chunk onto its
// arena's deferred list without taking the lock (it would hold the lock
// against that arena's own threads); the arena's next lock holder releases
// it. The list holds kLargeDeferredBytes at most: beyond, the freer releases.
TEST(StrataLarge, AFreeFromAnotherArenasThreadIsDeferredWithoutTheLock) {
  using strata::malloc_detail::large_arena;
  using strata::malloc_detail::large_arena_of;
  using strata::malloc_detail::large_deferred_bytes;
  using strata::malloc_detail::large_free;
  void* p = strata_malloc(100000);
  ASSERT_NE(p, nullptr);
  auto& home = large_arena_of(p);
  auto& other = &large_arena(0) != &home ? large_arena(0) : large_arena(1);
  std::size_t live = large_stats().live_objects;  // (also releases anything deferred before)
  ASSERT_EQ(large_deferred_bytes(), 0u);
  large_free(p, other);
  EXPECT_GE(large_deferred_bytes(), std::size_t{100000});
  EXPECT_EQ(large_stats().live_objects, live - 1) << "the next lock holder releases it";
  EXPECT_EQ(large_deferred_bytes(), 0u);

  std::vector<void*> objects;
  for (int i = 0; i < 40; ++i) objects.push_back(strata_malloc(100000));
  for (void* q : objects) large_free(q, &large_arena_of(q) == &other ? large_arena(2) : other);
  EXPECT_LE(large_deferred_bytes(), cfg::kLargeDeferredBytes) << "4 MB freed, at most 1 MiB left deferred";
  large_stats();
}

// Resident pages of [p, p+bytes), asked of the kernel (mincore).
std::size_t resident_bytes(const void* p, std::size_t bytes) {
  auto lo = reinterpret_cast<std::uintptr_t>(p) & ~(cfg::kOsPageSize - 1);
  auto hi = (reinterpret_cast<std::uintptr_t>(p) + bytes + cfg::kOsPageSize - 1) & ~(cfg::kOsPageSize - 1);
  std::vector<unsigned char> pages((hi - lo) / cfg::kOsPageSize);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, pages.data()) != 0) return 0;  // unmapped: nothing resident
  std::size_t n = 0;
  for (unsigned char page : pages) n += page & 1;
  return n * cfg::kOsPageSize;
}

// Does this kernel fault pages in on request (MADV_POPULATE_WRITE, Linux 5.14)?
bool kernel_populates() {
  void* probe = mmap(nullptr, cfg::kOsPageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe == MAP_FAILED) return false;
  bool ok = madvise(probe, cfg::kOsPageSize, 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(probe, cfg::kOsPageSize);
  return ok;
}

// calloc of large objects clears only what is not zero already: chunks that
// held objects (dirty) and the edges of purged chunks (purge discards whole
// OS pages only) read as zeros all the same.
TEST(StrataLarge, CallocReadsZeroInDirtyAndPurgedChunks) {
  // Its chunk (72 OS pages, header included) is the lowest size of its bin,
  // so the same request takes a freed one whole; and chunks start 64 bytes
  // into a page, so each ends with a partial page that purging keeps.
  constexpr std::size_t kSize = 72 * cfg::kOsPageSize - 16;
  constexpr std::size_t kCount = 2 * (cfg::kLargeDirtyLimit / kSize) + 16;  // freeing half of them purges
  auto all_zero = [](const unsigned char* p, std::size_t n) {
    return std::all_of(p, p + n, [](unsigned char b) { return b == 0; });
  };
  std::vector<unsigned char*> objects;
  for (std::size_t i = 0; i < kCount; ++i) {
    objects.push_back(static_cast<unsigned char*>(strata_malloc(kSize)));
    std::memset(objects.back(), 0xff, kSize);
  }
  strata_free(objects.back());  // dirty: the next one of this size reuses it
  auto* reused = static_cast<unsigned char*>(strata_calloc(1, kSize));
  EXPECT_TRUE(all_zero(reused, kSize));
  objects.back() = reused;
  std::memset(reused, 0xff, kSize);
  // Every other one: free chunks between live ones, more than the dirty limit.
  std::size_t discarded_before = strata::malloc_detail::discarded_os_pages();
  for (std::size_t i = 0; i < kCount; i += 2) strata_free(objects[i]);
  ASSERT_GT(strata::malloc_detail::discarded_os_pages(), discarded_before) << "the free chunks were purged";
  const bool populates = kernel_populates();
  for (std::size_t i = 0; i < kCount; i += 2) {  // the purged chunks, whole
    objects[i] = static_cast<unsigned char*>(strata_calloc(kSize, 1));
    ASSERT_NE(objects[i], nullptr);
    // Their discarded pages come back faulted in at once (where the kernel can).
    auto* middle = reinterpret_cast<unsigned char*>(reinterpret_cast<std::uintptr_t>(objects[i] + kSize / 2) & ~(cfg::kOsPageSize - 1));
    EXPECT_EQ(resident_bytes(middle, 4 * cfg::kOsPageSize) == 4 * cfg::kOsPageSize, populates) << "object " << i;
    EXPECT_TRUE(all_zero(objects[i], kSize)) << "object " << i;
  }
  for (unsigned char* p : objects) strata_free(p);
}

// Does the kernel give transparent huge pages where they are asked for?
bool kernel_gives_huge_pages() {
  std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return false;
  char text[64] = {};
  bool read = std::fgets(text, sizeof text, f) != nullptr;
  std::fclose(f);
  return read && std::strstr(text, "[never]") == nullptr;
}

// In a fresh process (its arenas hold no purged extents): callocs of 60 KiB
// over several regions. 0: no huge pages until kHugePagesFromRegion regions
// are mapped, and in every region huge pages back, at most one populate call
// per 2 MiB extent, each leaving its extent resident whole.
int populates_each_extent_once() {
  constexpr std::size_t kSize = 60 * 1024;
  constexpr std::size_t kExtents = cfg::kSegmentSize / cfg::kHugePageSize;
  std::vector<void*> objects;
  std::vector<std::pair<std::uintptr_t, std::size_t>> calls;  // region, populate calls in it
  std::vector<std::uintptr_t> plain;                          // regions without huge pages
  for (std::size_t i = 0; i < (cfg::kHugePagesFromRegion + 3) * (cfg::kSegmentSize / kSize); ++i) {
    std::size_t before = strata::malloc_detail::populate_calls();
    void* p = strata_calloc(1, kSize);
    if (!p) return 1;
    objects.push_back(p);
    if (!strata::malloc_detail::large_region_has_huge_pages(p)) {
      if (!calls.empty()) return 5;  // once they start, every new region has them
      if (std::find(plain.begin(), plain.end(), strata::malloc_detail::segment_base(p)) == plain.end())
        plain.push_back(strata::malloc_detail::segment_base(p));
      continue;
    }
    if (plain.size() < cfg::kHugePagesFromRegion) return 6;  // not before the process holds that many regions
    std::uintptr_t region = strata::malloc_detail::segment_base(p);
    if (calls.empty() || calls.back().first != region) calls.emplace_back(region, 0);
    std::size_t made = strata::malloc_detail::populate_calls() - before;
    if (made == 0) continue;
    if ((calls.back().second += made) > kExtents) return 2;
    auto extent = (reinterpret_cast<std::uintptr_t>(p) + kSize / 2) & ~(cfg::kHugePageSize - 1);
    if (resident_bytes(reinterpret_cast<void*>(extent), cfg::kHugePageSize) != cfg::kHugePageSize) return 3;
  }
  if (calls.size() < 2) return 4;  // huge pages back the regions from the kHugePagesFromRegion + 1st on
  for (void* p : objects) strata_free(p);
  return 0;
}

// In a region huge pages back, the first calloc of clean memory in each 2 MiB
// extent faults the extent in whole (one system call; the kernel would give
// the whole huge page at the first touch anyway); the later ones there need
// none. (Elsewhere each calloc of clean memory faults in its own pages:
// CallocReadsZeroInDirtyAndPurgedChunks.)
TEST(StrataLargeDeathTest, CallocFaultsInAHugePageExtentOnceThenNeedsNoSystemCall) {
  if (!kernel_populates()) GTEST_SKIP() << "the kernel cannot fault pages in on request (before Linux 5.14)";
  if (!kernel_gives_huge_pages()) GTEST_SKIP() << "transparent huge pages are off (\"never\")";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(populates_each_extent_once()), testing::ExitedWithCode(0), "");
}

TEST(StrataLarge, ReallocGrowsInPlaceIntoAFreeNeighbour) {
  std::thread([] {
    void* a = strata_malloc(50000);
    void* b = strata_malloc(50000);
    void* c = strata_malloc(50000);
    ASSERT_EQ(static_cast<char*>(b) - static_cast<char*>(a), 50016) << "consecutive chunks in a fresh arena";
    strata_free(b);
    EXPECT_EQ(strata_realloc(a, 90000), a);
    strata_free(a);
    strata_free(c);
  }).join();
}

// Splitting and coalescing keep a chunk in its bin's list in place when its
// size stays in the bin (LargeArena::rebin): after every kind of large
// operation, in random order, each region still tiles into chunks whose tags
// agree, no two free chunks are neighbours, every free chunk is in its size's
// bin and the bitmaps and byte counts agree (large_verify).
void random_large_operations(std::uint32_t seed, int operations, std::vector<void*>& live) {
  std::mt19937 rng(seed);
  auto size = [&rng] {  // mostly xfree's 8-16 KiB, some up to 1 MiB
    return rng() % 4 ? 8193 + rng() % 8192 : 8193 + rng() % (1024 * 1024);
  };
  for (int i = 0; i < operations; ++i) {
    unsigned what = rng() % 10;
    if (what < 4 || live.empty()) {
      live.push_back(what == 0 ? strata_calloc(1, size()) : strata_malloc(size()));
      ASSERT_NE(live.back(), nullptr);
    } else if (what < 5) {
      void* p = nullptr;
      ASSERT_EQ(strata_posix_memalign(&p, std::size_t{4096} << (rng() % 3), size()), 0);
      live.push_back(p);
    } else if (what < 7) {
      std::size_t at = rng() % live.size();
      void* grown = strata_realloc(live[at], size());
      ASSERT_NE(grown, nullptr);
      live[at] = grown;
    } else {
      std::size_t at = rng() % live.size();
      strata_free(live[at]);
      live[at] = live.back();
      live.pop_back();
    }
    if (i % 256 == 0) {
      ASSERT_STREQ(strata::malloc_detail::large_verify(), nullptr) << "after operation " << i;
    }
  }
}

TEST(StrataLarge, SplitAndCoalesceKeepTheBinsConsistent) {
  std::thread([] {
    std::vector<void*> live;
    random_large_operations(7, 3000, live);
    EXPECT_STREQ(strata::malloc_detail::large_verify(), nullptr);
    for (void* p : live) strata_free(p);
    EXPECT_STREQ(strata::malloc_detail::large_verify(), nullptr);
  }).join();
}

// The same with the objects freed as by a thread of another arena: onto the
// arena's deferred list, released by the next lock holder.
TEST(StrataLarge, DeferredFreesKeepTheBinsConsistent) {
  using strata::malloc_detail::large_arena;
  using strata::malloc_detail::large_arena_of;
  std::thread([] {
    std::vector<void*> live;
    random_large_operations(8, 2000, live);
    std::mt19937 rng(9);
    std::shuffle(live.begin(), live.end(), rng);
    for (std::size_t i = 0; i < live.size(); ++i) {
      auto& home = large_arena_of(live[i]);
      strata::malloc_detail::large_free(live[i], &home == &large_arena(0) ? large_arena(1) : large_arena(0));
      if (i % 64 == 0) {
        ASSERT_STREQ(strata::malloc_detail::large_verify(), nullptr) << "after free " << i;
      }
    }
    EXPECT_STREQ(strata::malloc_detail::large_verify(), nullptr);
  }).join();
}

TEST(StrataPages, EmptyBlocksAreDiscardedBeyondTheRetainedFew) {
  NoPurgeDelay no_delay;
  std::thread([] {
    std::size_t before = strata::malloc_detail::discarded_os_pages();
    std::vector<void*> objects;
    // 56 page blocks more than a heap retains, of 256-byte objects
    const std::size_t blocks = cfg::kRetainedEmptyPages + 56;
    for (std::size_t i = 0; i < blocks * cfg::kPageSize / 256; ++i) objects.push_back(strata_malloc(256));
    for (void* p : objects) strata_free(p);
    std::size_t discarded = strata::malloc_detail::discarded_os_pages() - before;
    // all but the retained blocks (and the front one) were handed back
    std::size_t expected = (blocks - cfg::kRetainedEmptyPages - 1) * (cfg::kPageSize / cfg::kOsPageSize);
    EXPECT_GE(discarded, expected);
  }).join();
}

TEST(StrataPages, AMallocFreeLoopOnABlockBoundaryDoesNotDiscard) {
  std::thread([] {
    std::vector<void*> fill;
    for (std::size_t i = 0; i < cfg::kPageSize / 1024; ++i) fill.push_back(strata_malloc(1024));  // exactly one block
    std::size_t before = strata::malloc_detail::discarded_os_pages();
    for (int i = 0; i < 10000; ++i) strata_free(strata_malloc(1024));  // each turn empties a new block
    EXPECT_EQ(strata::malloc_detail::discarded_os_pages(), before);
    for (void* p : fill) strata_free(p);
  }).join();
}

TEST(StrataPages, BatchesAllocatedAndFreedAgainAndAgainReuseWarmBlocks) {
  // glibc's simple malloc benchmark's pattern: a batch of objects, all freed,
  // then the next batch. A batch of 40 blocks (2.5 MiB) is within what a heap
  // learns to retain: after a few turns nothing is discarded any more, so no
  // turn pays madvise and page faults.
  std::thread([] {
    const std::size_t blocks = 40;
    std::vector<void*> batch(blocks * cfg::kPageSize / 512);
    std::size_t after_warmup = 0;
    for (int turn = 0; turn < 20; ++turn) {
      for (void*& p : batch) p = strata_malloc(512);
      for (void* p : batch) strata_free(p);
      if (turn == 4) after_warmup = strata::malloc_detail::discarded_os_pages();
    }
    EXPECT_EQ(strata::malloc_detail::discarded_os_pages(), after_warmup);
  }).join();
}

// The heap that owns a small object (its segment's owner).
strata::malloc_detail::PerThreadHeap* heap_of(void* p) {
  return strata::malloc_detail::segment_of(p)->owner;
}

// Allocates `blocks` page blocks worth of 256-byte objects and frees them all.
// Returns the OS pages discarded meanwhile.
std::size_t fill_and_free_blocks(std::size_t blocks) {
  std::size_t before = strata::malloc_detail::discarded_os_pages();
  std::vector<void*> objects;
  for (std::size_t i = 0; i < blocks * cfg::kPageSize / 256; ++i) objects.push_back(strata_malloc(256));
  for (void* p : objects) strata_free(p);
  return strata::malloc_detail::discarded_os_pages() - before;
}

// A working set that breathes (thread churn): the first rounds discard blocks
// that the next round faults in again, so the heap raises its retain limit
// until a round discards nothing.
TEST(StrataPages, AHeapThatFaultsDiscardedBlocksInAgainKeepsMoreEmptyBlocks) {
  NoPurgeDelay no_delay;
  std::thread([] {
    constexpr std::size_t kBlocks = 24;
    static_assert(kBlocks > cfg::kRetainedEmptyPages + 1 && kBlocks < cfg::kRetainedEmptyMax);
    for (int round = 0; round < 3; ++round) fill_and_free_blocks(kBlocks);
    EXPECT_EQ(fill_and_free_blocks(kBlocks), 0u) << "a breathing working set stops being discarded";
    void* probe = strata_malloc(256);
    auto* heap = heap_of(probe);
    EXPECT_GT(heap->retain_limit, cfg::kRetainedEmptyPages);
    EXPECT_LE(heap->retain_limit, cfg::kRetainedEmptyMax);
    strata_free(probe);
  }).join();
}

// Freeing alone brings a raised limit back down: after the breathing above, a
// burst big enough to overflow the LRU kRetainLowerEvery times per block of
// the highest limit leaves kRetainedEmptyPages empty blocks resident.
TEST(StrataPages, ABurstFreedAfterChurnKeepsOnlyTheRetainedFew) {
  NoPurgeDelay no_delay;
  std::thread([] {
    for (int round = 0; round < 4; ++round) fill_and_free_blocks(24);
    void* probe = strata_malloc(256);
    auto* heap = heap_of(probe);
    strata_free(probe);
    ASSERT_GT(heap->retain_limit, cfg::kRetainedEmptyPages);
    const std::size_t burst = cfg::kRetainedEmptyMax * (cfg::kRetainLowerEvery + 1);
    std::size_t discarded = fill_and_free_blocks(burst);
    EXPECT_EQ(heap->retain_limit, cfg::kRetainedEmptyPages);
    EXPECT_LE(heap->empty_pages.count, cfg::kRetainedEmptyPages);
    EXPECT_GE(discarded, (burst - cfg::kRetainedEmptyMax - 1) * (cfg::kPageSize / cfg::kOsPageSize));
  }).join();
}

// calloc skips clearing only memory no object has used: blocks that held
// another class's objects, retired resident and reused warm, are cleared.
// The overflow of a raised retain limit is discarded cfg::kPurgeBatch blocks
// at a time, adjacent blocks in one system call: blocks filled in address
// order and emptied in the same order go back in runs, not one call each.
TEST(StrataPages, DiscardsOfARaisedLimitComeInBatchesOfAdjacentBlocks) {
  NoPurgeDelay no_delay;
  std::thread([] {
    for (int round = 0; round < 4; ++round) fill_and_free_blocks(24);  // raises the limit
    void* probe = strata_malloc(256);
    auto* heap = heap_of(probe);
    strata_free(probe);
    ASSERT_GT(heap->retain_limit, cfg::kRetainedEmptyPages);
    std::size_t calls = strata::malloc_detail::discard_calls();
    std::size_t pages = fill_and_free_blocks(256);
    calls = strata::malloc_detail::discard_calls() - calls;
    std::size_t blocks = pages / (cfg::kPageSize / cfg::kOsPageSize);
    ASSERT_GE(blocks, 64u) << "a burst of 256 blocks overflows the limit";
    EXPECT_LE(calls * 4, blocks) << calls << " calls for " << blocks << " blocks";
    EXPECT_LE(heap->empty_pages.count, heap->retain_limit) << "batches never keep more than the limit";
  }).join();
}

// calloc of small objects in fresh memory clears nothing, yet leaves every OS
// page of the object faulted in for writing: a first read by the program
// would map the shared zero page, and its first store then copy the page (a
// second fault, and a TLB shootdown). 48-byte objects: 4096 is no multiple,
// so objects straddle OS pages anywhere in the fresh memory a block opens.
TEST(StrataPages, CallocOfAFreshObjectLeavesEachOfItsPagesResident) {
  std::thread([] {
    constexpr std::size_t kSize = 48;
    constexpr std::size_t kCount = 3 * cfg::kPageSize / kSize;  // past any block the heap has begun
    std::vector<unsigned char*> objects;
    for (std::size_t i = 0; i < kCount; ++i) {
      auto* p = static_cast<unsigned char*>(strata_calloc(1, kSize));
      ASSERT_NE(p, nullptr);
      auto first = reinterpret_cast<std::uintptr_t>(p) & ~(cfg::kOsPageSize - 1);
      std::size_t span = reinterpret_cast<std::uintptr_t>(p) + kSize - first;
      EXPECT_EQ(resident_bytes(p, kSize), (span + cfg::kOsPageSize - 1) / cfg::kOsPageSize * cfg::kOsPageSize)
          << "object " << i;
      EXPECT_TRUE(std::all_of(p, p + kSize, [](unsigned char b) { return b == 0; })) << "object " << i;
      objects.push_back(p);
    }
    for (unsigned char* p : objects) strata_free(p);
  }).join();
}

TEST(StrataPages, CallocClearsAReusedBlock) {
  std::thread([] {
    constexpr std::size_t kBlocks = 3;
    auto block_of = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) & ~(cfg::kPageSize - 1); };
    std::vector<void*> objects;
    for (std::size_t i = 0; i < kBlocks * cfg::kPageSize / 256; ++i) {
      objects.push_back(strata_malloc(256));
      std::memset(objects.back(), 0xff, 256);
    }
    std::vector<std::uintptr_t> dirty_blocks;  // all but the front one retire, resident (the LRU)
    for (void* p : objects)
      if (block_of(p) != block_of(objects.back()) &&
          std::find(dirty_blocks.begin(), dirty_blocks.end(), block_of(p)) == dirty_blocks.end())
        dirty_blocks.push_back(block_of(p));
    for (void* p : objects) strata_free(p);
    bool reused = false, all_zero = true;
    std::vector<void*> zeroed;
    for (std::size_t i = 0; i < kBlocks * cfg::kPageSize / 48; ++i) {  // another class
      auto* p = static_cast<unsigned char*>(strata_calloc(1, 48));
      zeroed.push_back(p);
      reused = reused || std::find(dirty_blocks.begin(), dirty_blocks.end(), block_of(p)) != dirty_blocks.end();
      for (std::size_t j = 0; j < 48; ++j) all_zero = all_zero && p[j] == 0;
    }
    EXPECT_TRUE(reused) << "the calloc'ed objects came from a retired, dirty block";
    EXPECT_TRUE(all_zero);
    for (void* p : zeroed) strata_free(p);
  }).join();
}

// ---- Huge objects (> kLargeMax): the cache of freed runs ----------------------
using strata::malloc_detail::huge_stats;

// The cache keeps the objects glibc would keep in its heap: those allocated
// once its mmap threshold has risen above their size (glibc maps and unmaps
// the others; test_program_memory.cpp). Here it rises as after the free of
// a mapped chunk of the threshold's upper bound.
void raise_glibcs_threshold() { (void)strata::malloc_detail::first_free_of_its_size(cfg::kEraseUpTo); }

TEST(StrataHuge, AFreedObjectsPagesServeTheNextHugeAllocation) {
  raise_glibcs_threshold();
  constexpr std::size_t kSize = 3 * 1024 * 1024 + 12345;
  auto before = huge_stats();
  auto* a = static_cast<unsigned char*>(strata_malloc(kSize));
  ASSERT_NE(a, nullptr);
  std::memset(a, 0xab, kSize);
  strata_free(a);
  auto freed = huge_stats();
  EXPECT_GE(freed.cached_bytes, kSize) << "the freed run stays mapped in the cache";
  // A little bigger: assembled from the cached run (moved or in place), not fresh.
  auto* b = static_cast<unsigned char*>(strata_malloc(kSize + 100000));
  ASSERT_NE(b, nullptr);
  auto after = huge_stats();
  EXPECT_GE(after.reused_bytes - before.reused_bytes, kSize - cfg::kSegmentSize / 4)
      << "most of the new object's pages come from the cache";
  EXPECT_LT(after.cached_bytes, freed.cached_bytes);
  EXPECT_LE(after.moved_bytes - before.moved_bytes, after.reused_bytes - before.reused_bytes) << "moved pages are reused pages";
  std::memset(b, 0xcd, kSize + 100000);
  strata_free(b);
}

TEST(StrataHuge, CachedBytesAreBoundedAndTheRestIsDiscarded) {
  raise_glibcs_threshold();
  std::vector<std::pair<void*, std::size_t>> objects;
  for (int i = 0; i < 40; ++i) {
    std::size_t size = (5 + static_cast<std::size_t>(i % 4)) * 1024 * 1024;
    objects.emplace_back(strata_malloc(size), size);
    ASSERT_NE(objects.back().first, nullptr);
    std::memset(objects.back().first, i, size);
  }
  auto before = huge_stats();
  for (auto [p, size] : objects) strata_free(p);
  auto s = huge_stats();
  EXPECT_LE(s.cached_bytes, cfg::kHugeCacheBytes);
  // 40 objects of 5-8 MiB (~260 MiB) were live and written: all but the
  // cache's bound went back to the OS.
  EXPECT_GE(s.discarded_bytes - before.discarded_bytes, (260u << 20) - cfg::kHugeCacheBytes);
  std::size_t resident = 0;
  for (auto [p, size] : objects) resident += resident_bytes(p, size);
  EXPECT_LE(resident, cfg::kHugeCacheBytes + cfg::kSegmentSize) << "the kernel agrees";
}

TEST(StrataHuge, AFreedRunIsReusedWhereItIsWithoutSystemCalls) {
  strata::malloc_detail::huge_discard_cache();  // only this test's run is resident
  constexpr std::size_t kSize = 5 * 1024 * 1024;
  auto* a = static_cast<unsigned char*>(strata_malloc(kSize));
  ASSERT_NE(a, nullptr);
  std::memset(a, 0xab, kSize);
  strata_free(a);
  auto freed = huge_stats();
  EXPECT_GE(freed.cached_bytes, kSize);
  EXPECT_GE(resident_bytes(a, kSize), kSize - cfg::kOsPageSize) << "freed pages stay resident (the cache)";
  auto* b = static_cast<unsigned char*>(strata_malloc(kSize - 1000));
  EXPECT_EQ(b, a) << "the resident run is reused in place";
  auto after = huge_stats();
  EXPECT_GE(after.reused_bytes - freed.reused_bytes, kSize - cfg::kOsPageSize);
  EXPECT_EQ(after.moved_bytes, freed.moved_bytes) << "no page moved";
  strata_free(b);
}

TEST(StrataHuge, CallocOfAReusedRunIsZero) {
  strata::malloc_detail::huge_discard_cache();
  constexpr std::size_t kSize = 6 * 1024 * 1024 + 100;
  auto* a = static_cast<unsigned char*>(strata_malloc(kSize));
  ASSERT_NE(a, nullptr);
  std::memset(a, 0xff, kSize);
  strata_free(a);
  auto* b = static_cast<unsigned char*>(strata_calloc(1, kSize));
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b, a);
  for (std::size_t i = 0; i < kSize; ++i) ASSERT_EQ(b[i], 0) << "at " << i;
  strata_free(b);
}

TEST(StrataHuge, ReallocGrowsInPlaceIntoFreeSegmentsBehind) {
  strata::malloc_detail::huge_discard_cache();  // a clean place with the most room behind it is chosen
  std::size_t size = 3 * 1024 * 1024;
  auto* p = static_cast<unsigned char*>(strata_malloc(size));
  ASSERT_NE(p, nullptr);
  for (std::size_t i = 0; i < size; i += 4096) p[i] = static_cast<unsigned char>(i / 4096);
  auto before = huge_stats();
  auto* q = static_cast<unsigned char*>(strata_realloc(p, 3 * 1024 * 1024 + 900000));
  EXPECT_EQ(q, p) << "growth inside the run's segment";
  auto* r = static_cast<unsigned char*>(strata_realloc(q, 30 * 1024 * 1024));
  EXPECT_EQ(r, p) << "growth into the free segments behind";
  auto after = huge_stats();
  EXPECT_EQ(after.grown_in_place, before.grown_in_place + 1);
  for (std::size_t i = 0; i < size; i += 4096) ASSERT_EQ(r[i], static_cast<unsigned char>(i / 4096));
  std::memset(r, 1, 30 * 1024 * 1024);
  auto* s = static_cast<unsigned char*>(strata_realloc(r, 5 * 1024 * 1024));
  EXPECT_EQ(s, p) << "a shrink stays in place";
  EXPECT_GE(huge_stats().cached_bytes, 20u << 20) << "the segments behind the new end join the cache";
  EXPECT_EQ(s[5 * 1024 * 1024 - 1], 1);
  strata_free(s);
}

TEST(StrataHuge, CachedPagesElsewhereFillANewRunByMovingNotFaulting) {
  strata::malloc_detail::huge_discard_cache();
  constexpr std::size_t kSmall = 3 * 1024 * 1024;  // one segment
  auto* a = static_cast<unsigned char*>(strata_malloc(kSmall));
  auto* b = static_cast<unsigned char*>(strata_malloc(kSmall));  // right behind a: a's segment stays alone
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::memset(a, 1, kSmall);
  std::memset(b, 2, kSmall);
  strata_free(a);
  auto before = huge_stats();
  constexpr std::size_t kBig = 7 * 1024 * 1024;  // two segments: cannot go where a was
  auto* c = static_cast<unsigned char*>(strata_calloc(1, kBig));
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c, a);
  auto after = huge_stats();
  EXPECT_GE(after.moved_bytes - before.moved_bytes, kSmall - cfg::kOsPageSize) << "a's resident pages moved into c";
  EXPECT_LT(after.cached_bytes, before.cached_bytes);
  for (std::size_t i = 0; i < kBig; i += 997) ASSERT_EQ(c[i], 0) << "calloc over moved pages: at " << i;
  std::memset(c, 3, kBig);
  for (std::size_t i = 0; i < kSmall; i += 4096) ASSERT_EQ(b[i], 2);
  strata_free(b);
  strata_free(c);
}

TEST(StrataHuge, ReallocThatCannotGrowInPlaceMovesThePages) {
  strata::malloc_detail::huge_discard_cache();
  constexpr std::size_t kSize = 3 * 1024 * 1024;
  auto* a = static_cast<unsigned char*>(strata_malloc(kSize));
  auto* b = static_cast<unsigned char*>(strata_malloc(kSize));  // right behind a
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  for (std::size_t i = 0; i < kSize; ++i) a[i] = static_cast<unsigned char>(i * 13 + 5);
  auto before = huge_stats();
  auto* c = static_cast<unsigned char*>(strata_realloc(a, 3 * kSize));
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c, a);
  auto after = huge_stats();
  EXPECT_GE(after.moved_bytes - before.moved_bytes, kSize) << "moved by the kernel, not copied";
  for (std::size_t i = 0; i < kSize; ++i) ASSERT_EQ(c[i], static_cast<unsigned char>(i * 13 + 5)) << "at " << i;
  std::memset(c + kSize, 7, 2 * kSize);
  auto* d = static_cast<unsigned char*>(strata_malloc(kSize));  // a's old run: fresh pages, usable
  ASSERT_NE(d, nullptr);
  std::memset(d, 9, kSize);
  strata_free(b);
  strata_free(c);
  strata_free(d);
}

TEST(StrataHuge, BigAlignmentsAndObjectsBeyondTheRegionLimit) {
  for (std::size_t align : {std::size_t{64} << 10, std::size_t{1} << 20, cfg::kSegmentSize, std::size_t{16} << 20}) {
    void* p = nullptr;
    ASSERT_EQ(strata_posix_memalign(&p, align, 5 * 1024 * 1024), 0) << align;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << align;
    std::memset(p, 3, 5 * 1024 * 1024);
    EXPECT_GE(strata_usable_size(p), 5u * 1024 * 1024);
    auto* q = static_cast<unsigned char*>(strata_realloc(p, 12 * 1024 * 1024));
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q[5 * 1024 * 1024 - 1], 3);
    strata_free(q);
  }
  // Beyond kHugeRegionObjectMax: a mapping of its own, unmapped at free.
  std::size_t big = cfg::kHugeRegionObjectMax + 1;
  auto mapped = strata::malloc_detail::mapped_bytes();
  auto* b = static_cast<unsigned char*>(strata_malloc(big));
  ASSERT_NE(b, nullptr);
  b[0] = 1;
  b[big - 1] = 2;
  auto* c = static_cast<unsigned char*>(strata_realloc(b, big + (8u << 20)));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c[0], 1);
  EXPECT_EQ(c[big - 1], 2);
  strata_free(c);
  EXPECT_EQ(strata::malloc_detail::mapped_bytes(), mapped);
}

TEST(StrataHuge, ReallocGrowthAndShrinkKeepTheContents) {
  std::vector<void*> keep;  // other huge objects around, so that growth must move or use the cache
  std::size_t size = 2 * 1024 * 1024 + 4096;
  auto* p = static_cast<unsigned char*>(strata_malloc(size));
  ASSERT_NE(p, nullptr);
  for (std::size_t i = 0; i < size; ++i) p[i] = static_cast<unsigned char>(i * 7 + 1);
  for (int step = 0; step < 12; ++step) {
    keep.push_back(strata_malloc(3 * 1024 * 1024));  // neighbours, and freed runs for the cache
    if (step % 3 == 2) {
      strata_free(keep.front());
      keep.erase(keep.begin());
    }
    std::size_t next = step % 4 == 3 ? size / 3 + cfg::kLargeMax : size + 1024 * 1024 + 4096 * static_cast<std::size_t>(step);
    auto* q = static_cast<unsigned char*>(strata_realloc(p, next));
    ASSERT_NE(q, nullptr);
    std::size_t kept = next < size ? next : size;
    for (std::size_t i = 0; i < kept; i += 511) ASSERT_EQ(q[i], static_cast<unsigned char>(i * 7 + 1)) << "at " << i;
    ASSERT_EQ(q[kept - 1], static_cast<unsigned char>((kept - 1) * 7 + 1));
    ASSERT_GE(strata_usable_size(q), next);
    for (std::size_t i = kept; i < next; ++i) q[i] = static_cast<unsigned char>(i * 7 + 1);
    p = q;
    size = next;
  }
  strata_free(p);
  for (void* k : keep) strata_free(k);
}

// glibc's unmap-on-free, for what it catches (cfg::kEraseFrom): the first
// free of a large or huge object of 128 KiB or more discards its pages, so
// that its contents no longer leak to a read after free; a second free of
// that size does not (the threshold rose above it), so the cost is bounded.
// In a fresh process each (the threshold is process-wide): the threadsafe
// death-test style runs the test alone in a new copy of the binary.
int erases_first_free_only(std::size_t size) {
  std::size_t discarded = strata::malloc_detail::discarded_os_pages();
  auto* p = static_cast<unsigned char*>(strata_malloc(size));
  std::memset(p, 0x5a, size);
  strata_free(p);
  if (strata::malloc_detail::discarded_os_pages() < discarded + size / cfg::kOsPageSize - 1) return 1;
  const volatile unsigned char* v = p;
  std::size_t left = 0;
  for (std::size_t i = 0; i < size; ++i) left += v[i] == 0x5a;
  if (left > cfg::kOsPageSize) return 2;  // the secret is gone (but the partial page at each end)
  auto* q = static_cast<unsigned char*>(strata_malloc(size));
  std::memset(q, 0x5a, size);
  discarded = strata::malloc_detail::discarded_os_pages();
  strata_free(q);
  if (strata::malloc_detail::discarded_os_pages() != discarded) return 3;  // no system call this time
  return 0;
}

TEST(StrataLargeDeathTest, FirstFreeOfABigSizeErasesItLikeGlibcsUnmap) {
  static_assert(cfg::kEraseFrom <= (std::size_t{256} << 10) && (std::size_t{256} << 10) <= cfg::kLargeMax);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(erases_first_free_only(std::size_t{256} << 10)), testing::ExitedWithCode(0), "") << "large";
  EXPECT_EXIT(std::exit(erases_first_free_only(std::size_t{4} << 20)), testing::ExitedWithCode(0), "") << "huge";
}

}  // namespace
