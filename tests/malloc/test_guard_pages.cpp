// The hardened build's guard pages (cfg::kGuardPages): a write one byte past a
// huge object, past a large object, or off the end of a small page block kills
// the process with SIGSEGV, at the write itself. And no guard gets in the way
// of a correct program: freed, reallocated, discarded and reused memory stays
// usable to its last byte.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>

#include "config.hpp"
#include "huge_heap.hpp"
#include "large_heap.hpp"
#include "options.hpp"
#include "os.hpp"
#include "segment.hpp"
#include "strata/strata.h"

namespace {

namespace cfg = strata::malloc_config;
namespace md = strata::malloc_detail;
static_assert(cfg::kGuardPages, "this test links strata_core_hardened");

// The write in a child, with the default SIGSEGV action (a sanitizer's handler
// would turn the fault into a report and an exit code).
void write_byte(char* at) {
  std::signal(SIGSEGV, SIG_DFL);
  *static_cast<volatile char*>(at) = 1;
}
#define EXPECT_FAULTS(at) EXPECT_EXIT(write_byte(at), testing::KilledBySignal(SIGSEGV), "")

// Writes every byte of p's usable size: no guard inside an object.
void fill(void* p) { std::memset(p, 0x5a, strata_usable_size(p)); }

std::size_t round16(std::size_t n) { return (n + 15) & ~std::size_t{15}; }

using GuardPagesDeathTest = testing::Test;

TEST_F(GuardPagesDeathTest, OneBytePastAHugeObject) {
  for (std::size_t size : {std::size_t{3} << 20, (std::size_t{5} << 20) + 5, std::size_t{300} << 20}) {
    auto* p = static_cast<char*>(strata_malloc(size));
    ASSERT_NE(p, nullptr);
    // Right-aligned against the guard: only the rounding to 16 bytes is slack.
    ASSERT_EQ(strata_usable_size(p), round16(size)) << size;
    p[0] = 1;
    p[round16(size) - 1] = 1;
    EXPECT_FAULTS(p + round16(size));
    strata_free(p);
  }
}

TEST_F(GuardPagesDeathTest, HugeGuardFollowsRealloc) {
  auto* p = static_cast<char*>(strata_malloc(3 << 20));
  for (std::size_t size : {std::size_t{9} << 20, std::size_t{40} << 20, std::size_t{5} << 20, (std::size_t{5} << 20) - 100000}) {
    p = static_cast<char*>(strata_realloc(p, size));
    ASSERT_NE(p, nullptr);
    fill(p);
    EXPECT_FAULTS(p + strata_usable_size(p)) << size;
  }
  strata_free(p);
}

TEST_F(GuardPagesDeathTest, OneBytePastALargeObject) {
  static_assert(cfg::kLargeGuardMin == 64 * 1024, "the sizes below straddle it");
  for (std::size_t size : {std::size_t{65536}, std::size_t{100001}, (std::size_t{1} << 20) + 3, std::size_t{2} << 20}) {
    auto* p = static_cast<char*>(strata_malloc(size));
    ASSERT_EQ(strata_usable_size(p), round16(size)) << size;
    fill(p);
    EXPECT_FAULTS(p + round16(size)) << size;
    strata_free(p);
  }
  void* aligned = nullptr;
  ASSERT_EQ(strata_posix_memalign(&aligned, 4096, 80000), 0);
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 4096, 0u);
  fill(aligned);
  EXPECT_FAULTS(static_cast<char*>(aligned) + strata_usable_size(aligned));
  strata_free(aligned);
}

// calloc of a guarded large object: placed against its guard, and zero even
// where a freed object of the same arena left its bytes.
TEST_F(GuardPagesDeathTest, LargeCallocIsZeroAndGuarded) {
  for (std::size_t size : {std::size_t{65536} + 48, std::size_t{300000}}) {
    for (int turn = 0; turn < 3; ++turn) {
      auto* p = static_cast<char*>(strata_calloc(1, size));
      ASSERT_NE(p, nullptr);
      for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(p[i], 0) << size << " byte " << i << " turn " << turn;
      fill(p);
      EXPECT_FAULTS(p + round16(size)) << size;
      strata_free(p);
    }
  }
}

TEST_F(GuardPagesDeathTest, LargeGuardAfterReallocInPlace) {
  // In place (the guard moves to the new page-rounded end), or moved.
  auto* p = static_cast<char*>(strata_malloc(300000));
  auto* q = static_cast<char*>(strata_realloc(p, 200000));
  ASSERT_EQ(q, p) << "a shrink stays in place";
  EXPECT_FAULTS(q + strata_usable_size(q));
  for (std::size_t size : {std::size_t{250000}, std::size_t{1} << 20, std::size_t{70000}, std::size_t{20000}}) {
    q = static_cast<char*>(strata_realloc(q, size));
    fill(q);
    if (size >= cfg::kLargeGuardMin) {
      EXPECT_FAULTS(q + strata_usable_size(q)) << size;
    }
  }
  strata_free(q);
}

TEST_F(GuardPagesDeathTest, LargeDoubleFreeStillReported) {
  auto* p = static_cast<char*>(strata_malloc(100000));
  strata_free(p);
  char expected[64];
  std::snprintf(expected, sizeof expected, "double free of %p", static_cast<void*>(p));
  EXPECT_DEATH(strata_free(p), expected);
}

// Use after free of a large object (cfg::kLargeQuarantineSlots): its first
// whole pages fault on a read and on a write, while it is quarantined.
char read_byte(const char* at) {
  std::signal(SIGSEGV, SIG_DFL);
  return *static_cast<const volatile char*>(at);
}

// The first whole page after the chunk's header and free-list links (32 bytes).
char* first_freed_page(char* p) {
  return reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(p) + 16 + cfg::kOsPageSize - 1) & ~(cfg::kOsPageSize - 1));
}

TEST_F(GuardPagesDeathTest, ReadAndWriteAfterFreeOfALargeObjectFault) {
  for (std::size_t size : {std::size_t{65536}, std::size_t{256} << 10, (std::size_t{2} << 20) - 100}) {
    auto* p = static_cast<char*>(strata_malloc(size));
    fill(p);
    strata_free(p);
    char* page = first_freed_page(p);
    EXPECT_EXIT(read_byte(page), testing::KilledBySignal(SIGSEGV), "") << size;
    EXPECT_FAULTS(page) << size;
    // Up to kLargeFreedProtectBytes are protected; a smaller object's all but its head.
    std::size_t protect = std::min(cfg::kLargeFreedProtectBytes, static_cast<std::size_t>(p + size - page) & ~(cfg::kOsPageSize - 1));
    EXPECT_FAULTS(page + protect - 1) << size;
  }
}

TEST(GuardPages, FreedLargeObjectsWaitInTheQuarantine) {
  static_assert(cfg::kLargeQuarantineSlots >= 2);
  // This thread's arena's quarantine, full of objects of one size.
  std::size_t before = md::large_stats().quarantined_objects;
  std::vector<void*> fillers;
  for (std::size_t i = 0; i < cfg::kLargeQuarantineSlots; ++i) fillers.push_back(strata_malloc(300000));
  auto* p = static_cast<char*>(strata_malloc(300000));
  for (void* f : fillers) strata_free(f);
  EXPECT_GE(md::large_stats().quarantined_objects, std::min(before + cfg::kLargeQuarantineSlots, cfg::kLargeQuarantineSlots));
  std::size_t full = md::large_stats().quarantined_objects;
  strata_free(p);
  EXPECT_EQ(md::large_stats().quarantined_objects, full) << "one in, the oldest out";
  // Not reused while quarantined: a new object of its size goes elsewhere.
  auto* q = static_cast<char*>(strata_malloc(300000));
  EXPECT_NE(q, p);
  strata_free(q);
  // kLargeQuarantineSlots later frees push it out: usable to its last byte again.
  for (std::size_t i = 0; i < cfg::kLargeQuarantineSlots; ++i) strata_free(strata_malloc(300000));
  md::LargeStats s = md::large_stats();
  EXPECT_LE(s.quarantined_objects, cfg::kLargeQuarantineSlots);
  EXPECT_LE(s.quarantined_bytes, cfg::kLargeQuarantineBytes);
  std::vector<void*> objects;
  for (std::size_t i = 0; i < 4 * cfg::kLargeQuarantineSlots; ++i) {
    objects.push_back(strata_malloc(300000));
    fill(objects.back());
  }
  for (void* o : objects) strata_free(o);
}

TEST(GuardPages, LargeQuarantineHoldsAtMostItsBytes) {
  // Objects of 1.5 MiB: kLargeQuarantineBytes fills before the slots do.
  for (int i = 0; i < 40; ++i) strata_free(strata_malloc(std::size_t{3} << 19));
  EXPECT_LE(md::large_stats().quarantined_bytes, cfg::kLargeQuarantineBytes * cfg::kLargeArenas);
}

// The quarantine's bytes follow the arena's live bytes: a modest heap keeps
// the floor, not kLargeQuarantineBytes (each quarantined byte stays resident).
TEST(GuardPages, LargeQuarantineOfAModestHeapHoldsTheFloor) {
  static_assert(cfg::kLargeQuarantineFloor < cfg::kLargeQuarantineBytes);
  void* first = strata_malloc(std::size_t{3} << 19);
  md::LargeArena& arena = md::large_arena_of(first);
  strata_free(first);
  ASSERT_LT(md::large_arena_stats(arena).live_bytes, cfg::kLargeQuarantineShare * cfg::kLargeQuarantineFloor);
  // Objects of 1.5 MiB: the floor fills before the slots do.
  for (int i = 0; i < 40; ++i) strata_free(strata_malloc(std::size_t{3} << 19));
  md::LargeStats s = md::large_arena_stats(arena);
  EXPECT_LE(s.quarantined_bytes, cfg::kLargeQuarantineFloor);
  EXPECT_GE(s.quarantined_objects, 1u) << "the last free still waits";
}

TEST(GuardPages, LargeQuarantineGrowsWithTheLiveHeap) {
  // 120 MiB live in this thread's arena: its quarantine may hold an eighth.
  std::vector<void*> live;
  for (int i = 0; i < 60; ++i) live.push_back(strata_malloc(std::size_t{2} << 20));
  md::LargeArena& arena = md::large_arena_of(live.front());
  for (int i = 0; i < 40; ++i) strata_free(strata_malloc(std::size_t{3} << 19));
  md::LargeStats s = md::large_arena_stats(arena);
  EXPECT_GT(s.quarantined_bytes, cfg::kLargeQuarantineFloor);
  EXPECT_LE(s.quarantined_bytes, s.live_bytes / cfg::kLargeQuarantineShare);
  for (void* p : live) strata_free(p);
}

// Objects of one class until one sits in the last slot of its block.
char* object_ending_its_block(std::size_t request, std::size_t slot, std::vector<void*>& keep) {
  for (int i = 0; i < 20000; ++i) {
    auto* p = static_cast<char*>(strata_malloc(request));
    keep.push_back(p);
    if ((reinterpret_cast<std::uintptr_t>(p) & (cfg::kPageSize - 1)) + slot == md::kBlockObjectBytes) return p;
  }
  return nullptr;
}

TEST_F(GuardPagesDeathTest, OffTheEndOfASmallBlock) {
  // 56 bytes and the 8-byte canary: the 64-byte class, whose slots fill the
  // block up to its guard exactly.
  std::vector<void*> keep;
  char* last = object_ending_its_block(64 - cfg::kCanaryBytes, 64, keep);
  ASSERT_NE(last, nullptr);
  std::memset(last, 1, 64 - cfg::kCanaryBytes);
  EXPECT_FAULTS(last + 64);
  for (void* p : keep) strata_free(p);
}

TEST_F(GuardPagesDeathTest, SmallBlockGuardOutlivesDiscarding) {
  // Blocks filled, emptied and discarded (many more than a heap keeps
  // resident), then filled again to the last slot: the guard is still there.
  // With no purge delay, so that they are discarded at once.
  std::uint32_t delay = md::g_purge_delay_ms.exchange(0);
  std::size_t discarded = md::discarded_os_pages();
  std::vector<void*> objects;
  for (int i = 0; i < 40 * 1000; ++i) objects.push_back(strata_malloc(48));
  for (void* p : objects) strata_free(p);
  std::vector<void*> filler(cfg::kQuarantineSlots);  // push the last of them out of the quarantine
  for (auto& f : filler) f = strata_malloc(1000);
  for (void* f : filler) strata_free(f);
  md::g_purge_delay_ms.store(delay);
  ASSERT_GT(md::discarded_os_pages(), discarded + 20 * cfg::kPageSize / cfg::kOsPageSize);
  std::vector<void*> keep;
  char* last = object_ending_its_block(64 - cfg::kCanaryBytes, 64, keep);
  ASSERT_NE(last, nullptr);
  for (void* p : keep) fill(p);
  EXPECT_FAULTS(last + 64);
  for (void* p : keep) strata_free(p);
}

TEST(GuardPages, FreedMemoryIsUsableAgain) {
  // Sizes across the three kinds, freed and reused in every order: each
  // object is writable to its last usable byte (no guard left behind).
  std::uint64_t x = 12345;
  std::vector<void*> live(64, nullptr);
  for (int i = 0; i < 4000; ++i) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    std::size_t slot = (x >> 33) % live.size();
    std::size_t size = std::size_t{1} << (4 + (x >> 40) % 19);  // 16 B .. 4 MiB
    size += (x >> 20) % size;
    if ((x >> 60) & 1 && live[slot]) {
      live[slot] = strata_realloc(live[slot], size);
    } else {
      strata_free(live[slot]);
      live[slot] = strata_malloc(size);
    }
    ASSERT_NE(live[slot], nullptr);
    fill(live[slot]);
  }
  for (void* p : live) strata_free(p);
  EXPECT_EQ(md::guards_refused(), 0u);
}

// Where the kernel has guard markers, a guard adds no kernel mapping.
TEST(GuardPages, MarkersSplitNoMapping) {
  strata_free(strata_malloc(3 << 20));  // the first guard asks the kernel
  if (md::guards_split_mappings()) GTEST_SKIP() << "no guard markers (Linux < 6.13): mprotect, tested below";
  // Earlier tests' cached huge pages would leave the cache on its clock
  // meanwhile (fresh pages mapped over them): gone before counting.
  md::huge_discard_cache();
  std::size_t before = md::count_mappings();
  std::vector<void*> objects;
  for (int i = 0; i < 50; ++i) objects.push_back(strata_malloc(std::size_t{3} << 20));
  for (int i = 0; i < 50; ++i) objects.push_back(strata_malloc(100000));
  EXPECT_LE(md::count_mappings(), before + 2);  // a new huge region or large region at most
  for (void* p : objects) strata_free(p);
}

// mprotect (kernels without guard markers): each guard splits a mapping, so
// guards stop near the limit and resume below it. In a child, switched over.
void guards_stop_near_the_mapping_limit_and_resume() {
  md::use_mprotect_guards();
  auto* p = static_cast<char*>(strata_malloc(3 << 20));
  if (!md::guards_split_mappings()) std::exit(2);
  std::size_t before = md::count_mappings();
  auto* q = static_cast<char*>(strata_malloc(3 << 20));
  if (md::count_mappings() != before + 2) std::exit(3);  // the region split around q's guard
  // A range of alternating protections: kGuardMappingsMax kernel mappings.
  std::size_t pages = cfg::kGuardMappingsMax + 2;
  auto* range = static_cast<char*>(mmap(nullptr, pages * cfg::kOsPageSize, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  for (std::size_t i = 0; i < pages; i += 2) mprotect(range + i * cfg::kOsPageSize, cfg::kOsPageSize, PROT_NONE);
  std::size_t refused = md::guards_refused();
  for (std::size_t i = 0; i < cfg::kGuardMappingsCheckEvery + 100; ++i) strata_free(strata_malloc(3 << 20));
  if (md::guards_refused() == refused) std::exit(4);
  munmap(range, pages * cfg::kOsPageSize);
  for (std::size_t i = 0; i < cfg::kGuardMappingsCheckEvery + 100; ++i) strata_free(strata_malloc(3 << 20));
  refused = md::guards_refused();
  auto* r = static_cast<char*>(strata_malloc(3 << 20));
  if (md::guards_refused() != refused) std::exit(5);
  strata_free(p);
  strata_free(q);
  std::signal(SIGSEGV, SIG_DFL);
  r[strata_usable_size(r)] = 1;  // the guard: dies here
  std::exit(0);
}

TEST_F(GuardPagesDeathTest, MprotectGuardsStopNearTheMappingLimitAndResume) {
  EXPECT_EXIT(guards_stop_near_the_mapping_limit_and_resume(), testing::KilledBySignal(SIGSEGV), "");
}

}  // namespace
