// Sized reaps (strata_reap_create_sized): no tags, 8-byte slots side by side,
// reuse of objects freed with their size, growth in place at the bump,
// clear/destroy/nesting with tagged reaps; and the per-thread chunk cache
// that hands a dropped reap's chunks to the next one.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "reap_test_support.hpp"
#include "strata/layers/region/chunk_source.hpp"
#include "strata/reap.hpp"

namespace {

using strata::test::aligned;
using strata::test::stats_of;

// A sized root reap destroyed at scope exit.
struct SizedReap {
  strata_reap* reap = strata_reap_create_sized(nullptr);
  SizedReap() = default;
  SizedReap(const SizedReap&) = delete;
  SizedReap& operator=(const SizedReap&) = delete;
  ~SizedReap() { strata_reap_destroy(reap); }
  operator strata_reap*() const { return reap; }
};

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

bool is_checked(strata_reap* reap) {
  return (reinterpret_cast<const strata_reap_head*>(reap)->sized.flags & STRATA_REAP_SLOW_CHECKED) != 0;
}

TEST(SizedReap, ObjectsSitSideBySideInGranules) {
  SizedReap reap;
  ASSERT_NE(reap.reap, nullptr);
  char* first = static_cast<char*>(strata_reap_malloc_sized(reap, 8));
  ASSERT_NE(first, nullptr);
  char* prev = first;
  std::size_t prev_size = 8, expected_live = 8, apart = 0;
  // The bumpalo mix: multiples of 8 take exactly their size, and each object
  // starts where the last one ended, but where the stream moves to a new chunk.
  for (int i = 0; i < 1000; ++i) {
    for (std::size_t size : {8u, 16u, 24u, 32u, 48u}) {
      char* p = static_cast<char*>(strata_reap_malloc_sized(reap, size));
      ASSERT_NE(p, nullptr);
      ASSERT_TRUE(aligned(p, STRATA_REAP_SIZED_GRANULE));
      std::memset(p, 0xab, size);
      expected_live += size;
      apart += p != prev + prev_size;
      prev = p;
      prev_size = size;
    }
  }
  EXPECT_LE(apart, stats_of(reap).chunks);
  EXPECT_EQ(stats_of(reap).bytes_live, expected_live);
  EXPECT_EQ(stats_of(reap).objects_live, STRATA_REAP_UNCOUNTED);
  // Odd sizes round up to the granule, size 0 takes one.
  const std::size_t before = stats_of(reap).bytes_live;
  void* a = strata_reap_malloc_sized(reap, 1);
  void* b = strata_reap_malloc_sized(reap, 9);
  void* z = strata_reap_malloc_sized(reap, 0);
  ASSERT_TRUE(a && b && z);
  EXPECT_EQ(addr(b) - addr(a), 8u);
  EXPECT_EQ(addr(z) - addr(b), 16u);
  EXPECT_EQ(stats_of(reap).bytes_live - before, 32u);
}

TEST(SizedReap, FreedObjectsAreReusedAndTheReapStaysFlat) {
  SizedReap reap;
  std::vector<void*> live;
  std::mt19937 rng(7);
  for (int i = 0; i < 4000; ++i) live.push_back(strata_reap_malloc_sized(reap, 8 * (1 + rng() % 6)));
  // Sizes are recomputed from the same seed below, so keep them.
  std::vector<std::size_t> sizes;
  rng.seed(7);
  for (int i = 0; i < 4000; ++i) sizes.push_back(8 * (1 + rng() % 6));
  const std::size_t held = stats_of(reap).bytes_held;
  for (int round = 0; round < 200; ++round) {
    for (std::size_t i = 0; i < live.size(); i += 2) strata_reap_free_sized(reap, live[i], sizes[i]);
    for (std::size_t i = 0; i < live.size(); i += 2) {
      live[i] = strata_reap_malloc_sized(reap, sizes[i]);
      ASSERT_NE(live[i], nullptr);
      std::memset(live[i], static_cast<int>(i), sizes[i]);
    }
  }
  EXPECT_LE(stats_of(reap).bytes_held, held + 16 * 1024) << "churn keeps the reap flat";
  std::size_t total = 0;
  for (std::size_t s : sizes) total += s;
  EXPECT_EQ(stats_of(reap).bytes_live, total);
  for (std::size_t i = 0; i < live.size(); ++i) strata_reap_free_sized(reap, live[i], sizes[i]);
  EXPECT_EQ(stats_of(reap).bytes_live, 0u);
}

TEST(SizedReap, ALongerFreedSlotIsCutForASmallerRequest) {
  SizedReap reap;
  // Freed objects come first once kReapWaitBytes wait (as start_reusing).
  void* primer = strata_reap_malloc_sized(reap, strata::test::kReapWaitBytes);
  void* last = strata_reap_malloc_sized(reap, 8);
  strata_reap_free_sized(reap, primer, strata::test::kReapWaitBytes);
  strata_reap_free_sized(reap, last, 8);
  void* big = strata_reap_malloc_sized(reap, 512);
  void* guard = strata_reap_malloc_sized(reap, 8);
  ASSERT_TRUE(big && guard);
  strata_reap_free_sized(reap, big, 512);
  void* a = strata_reap_malloc_sized(reap, 64);
  void* b = strata_reap_malloc_sized(reap, 64);
  EXPECT_EQ(a, big) << "the freed slot, cut";
  EXPECT_EQ(addr(b), addr(big) + 64) << "its rest, cut again";
}

TEST(SizedReap, TheLastObjectIsUnbumpedAndGrowsInPlace) {
  SizedReap reap;
  void* keep = strata_reap_malloc_sized(reap, 16);
  void* top = strata_reap_malloc_sized(reap, 40);
  strata_reap_free_sized(reap, top, 40);
  EXPECT_EQ(strata_reap_malloc_sized(reap, 40), top) << "the top was un-bumped";
  auto* v = static_cast<char*>(top);
  std::memcpy(v, "grow me", 8);
  // A checked reap (always under ASan) records each object's size: it moves.
  if (is_checked(reap)) {
    v = static_cast<char*>(strata_reap_realloc_sized(reap, v, 40, 5120));
    ASSERT_NE(v, nullptr);
    EXPECT_STREQ(v, "grow me");
    strata_reap_free_sized(reap, v, 5120);
    return;
  }
  for (std::size_t size = 40; size < 4000; size *= 2) {
    auto* grown = static_cast<char*>(strata_reap_realloc_sized(reap, v, size, size * 2));
    ASSERT_EQ(grown, v) << "the bump's object grows where it is";
  }
  EXPECT_STREQ(v, "grow me");
  EXPECT_EQ(addr(strata_reap_malloc_sized(reap, 8)), addr(v) + 5120) << "the bump follows the grown object";
  // An object in the middle moves when it grows, shrinks in place (its tail reused).
  auto* moved = static_cast<char*>(strata_reap_realloc_sized(reap, keep, 16, 100));
  ASSERT_NE(moved, keep);
  EXPECT_EQ(strata_reap_realloc_sized(reap, moved, 100, 100), moved);
  auto* m = static_cast<char*>(strata_reap_malloc_sized(reap, 200));
  EXPECT_EQ(strata_reap_realloc_sized(reap, m, 200, 16), m);
  strata_reap_free_sized(reap, m, 16);
  strata_reap_free_sized(reap, moved, 100);
  strata_reap_free_sized(reap, v, 5120);
  EXPECT_EQ(stats_of(reap).bytes_live, 8u);
}

TEST(SizedReap, LargeAndAlignedObjects) {
  SizedReap reap;
  const std::size_t large = STRATA_REAP_SIZED_MAX_SLOT + 1;
  auto* p = static_cast<char*>(strata_reap_malloc_sized(reap, large));
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, large);
  EXPECT_EQ(stats_of(reap).chunks, 2u) << "its own mapping, beside the reap's";
  strata_reap_free_sized(reap, p, large);
  EXPECT_EQ(stats_of(reap).chunks, 1u);
  for (std::size_t alignment : {16u, 64u, 4096u, 65536u}) {
    void* a = strata_reap_aligned_alloc(reap, alignment, 24);
    ASSERT_NE(a, nullptr);
    EXPECT_TRUE(aligned(a, alignment)) << alignment;
    strata_reap_free_sized(reap, a, 24);
  }
  void* m = strata_reap_malloc(reap, 10);  // the C malloc contract: 16-aligned
  EXPECT_TRUE(aligned(m, 16));
  strata_reap_free_sized(reap, m, 10);
  auto* c = static_cast<int*>(strata_reap_calloc(reap, 10, sizeof(int)));
  EXPECT_EQ(c[9], 0);
  strata_reap_free_sized(reap, c, 10 * sizeof(int));
  errno = 0;
  EXPECT_EQ(strata_reap_malloc_sized(reap, SIZE_MAX / 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_NE(strata_reap_malloc_sized(reap, 8), nullptr) << "the reap goes on";
  EXPECT_EQ(strata_reap_malloc_sized(reap, SIZE_MAX), nullptr);
}

// A size near SIZE_MAX rounds to a small slot; while freed objects wait, the
// reuse path must still refuse it (found by the fuzzer: it handed out an
// 8-byte slot).
TEST(SizedReap, SizesNearSizeMaxAreRefusedWhileFreedObjectsWait) {
  SizedReap reap;
  void* small = strata_reap_malloc_sized(reap, 8);
  void* keep = strata_reap_malloc_sized(reap, 8);  // small is not the last: it waits
  ASSERT_NE(keep, nullptr);
  strata_reap_free_sized(reap, small, 8);
  for (std::size_t below = 0; below < 2 * STRATA_REAP_SIZED_GRANULE; ++below) {
    errno = 0;
    EXPECT_EQ(strata_reap_malloc_sized(reap, SIZE_MAX - below), nullptr) << below;
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(strata_reap_realloc_sized(reap, keep, 8, SIZE_MAX - below), nullptr) << below;
    EXPECT_EQ(errno, ENOMEM);
  }
  std::memset(keep, 0x5a, 8);
  void* again = strata_reap_malloc_sized(reap, 8);
  ASSERT_NE(again, nullptr);
  std::memset(again, 0, 8);
  EXPECT_EQ(static_cast<unsigned char*>(keep)[7], 0x5a) << "the failed calls left keep alone";
}

TEST(SizedReap, NestsWithTaggedReapsAndClears) {
  strata::test::ScopedReap tagged;
  strata_reap* sized = strata_reap_create_sized(tagged);
  strata_reap* grandchild = strata_reap_create(sized);
  ASSERT_TRUE(sized && grandchild);
  std::vector<char*> objects;
  for (int i = 0; i < 10000; ++i) objects.push_back(static_cast<char*>(strata_reap_malloc_sized(sized, 24)));
  strata_reap_malloc(grandchild, 100);
  EXPECT_EQ(stats_of(sized).bytes_live, 240000u);
  strata_reap_clear(tagged);  // reaches the whole subtree
  EXPECT_EQ(stats_of(sized).bytes_live, 0u);
  EXPECT_EQ(stats_of(grandchild).objects_live, 0u);
  // Cleared, the reap bumps its first run again.
  EXPECT_EQ(strata_reap_malloc_sized(sized, 24), objects[0]);
  strata_reap_destroy(tagged.reap);  // destroys the children too
  tagged.reap = nullptr;
}

TEST(SizedReap, EachKindsCallsWorkOnTheOtherKind) {
  // A tagged reap takes the sized calls (its tags know the size).
  strata::test::ScopedReap tagged;
  auto* t = static_cast<char*>(strata_reap_malloc_sized(tagged, 30));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(stats_of(tagged).objects_live, 1u);
  t = static_cast<char*>(strata_reap_realloc_sized(tagged, t, 30, 3000));
  ASSERT_NE(t, nullptr);
  strata_reap_free_sized(tagged, t, 3000);
  EXPECT_EQ(stats_of(tagged).objects_live, 0u);
}

TEST(SizedReap, SizelessCallsOnASizedReapAbortNamingTheAddress) {
  GTEST_FLAG_SET(death_test_style, "fast");
  SizedReap reap;
  void* p = strata_reap_malloc_sized(reap, 16);
  EXPECT_DEATH(strata_reap_free(reap, p), "strata_reap_free\\(reap 0x[0-9a-f]+, 0x[0-9a-f]+\\): a sized reap");
  EXPECT_DEATH(strata_reap_usable_size(reap, p), "strata_reap_usable_size.*a sized reap keeps no sizes");
  EXPECT_DEATH(strata_reap_realloc(reap, p, 64), "strata_reap_realloc.*a sized reap keeps no sizes");
}

TEST(SizedReap, CppSizedReapAndResource) {
  strata::reap parent;
  strata::sized_reap s(parent);
  auto* p = static_cast<char*>(s.malloc(24));
  ASSERT_NE(p, nullptr);
  std::strcpy(p, "sized");
  p = static_cast<char*>(s.realloc(p, 24, 5000));
  EXPECT_STREQ(p, "sized");
  void* a = s.aligned_alloc(64, 16);
  EXPECT_TRUE(aligned(a, 64));
  EXPECT_EQ(s.stats().bytes_live, 5016u);
  s.free(p, 5000);
  s.free(a, 16);
  EXPECT_EQ(s.stats().bytes_live, 0u);
  s.malloc(8);
  parent.clear();
  EXPECT_EQ(s.stats().bytes_live, 0u);
  // pmr over a sized reap (deallocate gets the size) and over a tagged one.
  strata::reap_resource over_sized(s);
  void* q = over_sized.allocate(40, 8);
  EXPECT_EQ(s.stats().bytes_live, 40u);
  over_sized.deallocate(q, 40, 8);
  EXPECT_EQ(s.stats().bytes_live, 0u);
  strata::reap_resource over_tagged(parent);
  void* r = over_tagged.allocate(40, 8);
  EXPECT_EQ(parent.stats().objects_live, 1u);
  over_tagged.deallocate(r, 40, 8);
  EXPECT_EQ(parent.stats().objects_live, 0u);
}

// ---- the per-thread chunk cache ---------------------------------------------

TEST(ThreadChunkCache, ADroppedReapsChunksGoToTheNextReap) {
  using strata::layers::ThreadMappingCache;
  ThreadMappingCache& cache = ThreadMappingCache::instance();
  std::vector<void*> first_chunks;
  {
    SizedReap reap;
    for (int i = 0; i < 200000; ++i) ASSERT_NE(strata_reap_malloc_sized(reap, 48), nullptr);  // ~9 MiB
    EXPECT_GE(stats_of(reap).chunks, 8u);
  }
  const std::size_t kept = cache.heldBytes();
  EXPECT_GE(kept, std::size_t{8} << 20) << "the chunks above 256 KiB stayed with the thread";
  EXPECT_LE(kept, strata::layers::kThreadCachedBytes);
  {
    SizedReap reap;
    for (int i = 0; i < 200000; ++i) ASSERT_NE(strata_reap_malloc_sized(reap, 48), nullptr);
    EXPECT_LT(cache.heldBytes(), kept / 4) << "the next reap took them";
  }
}

TEST(ThreadChunkCache, BoundedAndReturnedOnTheClock) {
  using strata::layers::ThreadMappingCache;
  const auto keep = std::chrono::milliseconds(300);
  ThreadMappingCache cache(keep);  // a private one, on a short clock
  const std::size_t chunk = std::size_t{32} << 20;
  std::size_t given = 0;
  for (int i = 0; i < 12; ++i) {
    void* p = strata::platform::map_pages(chunk);
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(cache.give(p, chunk));
    given += chunk;
    EXPECT_LE(cache.heldBytes(), strata::layers::kThreadCachedBytes);
  }
  EXPECT_LT(cache.heldBytes(), given) << "the oldest went back at the bound";
  EXPECT_EQ(cache.heldBytes(), strata::layers::kThreadCachedBytes);
  void* taken = cache.take(chunk);
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(cache.take(chunk + 4096), nullptr) << "exact sizes only";
  strata::platform::unmap_pages(taken, chunk);
  std::this_thread::sleep_for(keep + std::chrono::milliseconds(100));
  EXPECT_EQ(cache.take(chunk), nullptr) << "after the clock, everything went back";
  EXPECT_EQ(cache.heldBytes(), 0u);
  cache.close();
  void* late = strata::platform::map_pages(chunk);
  EXPECT_FALSE(cache.give(late, chunk)) << "a closed cache keeps nothing";
  strata::platform::unmap_pages(late, chunk);
}

}  // namespace
