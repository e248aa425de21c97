// Every call of strata/reap.h and its edge cases, against the real reap and
// the region emulator alike.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "reap_test_support.hpp"

namespace {

using strata::test::aligned;
using strata::test::ScopedReap;
using strata::test::stats_of;

constexpr std::size_t kHuge = SIZE_MAX / 2;  // more than any address space

TEST(ReapApi, CreateGivesAnEmptyReap) {
  ScopedReap reap;
  ASSERT_NE(reap.reap, nullptr);
  EXPECT_EQ(stats_of(reap).objects_live, 0u);
  EXPECT_EQ(stats_of(reap).bytes_live, 0u);
}

TEST(ReapApi, DestroyAndClearOfNullAreNoOps) {
  strata_reap_destroy(nullptr);
  strata_reap_clear(nullptr);
}

TEST(ReapApi, MallocZeroGivesUniqueFreeablePointers) {
  ScopedReap reap;
  std::set<void*> seen;
  std::vector<void*> all;
  for (int i = 0; i < 1000; ++i) {
    void* p = strata_reap_malloc(reap, 0);
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(seen.insert(p).second) << "malloc(0) returned " << p << " twice";
    all.push_back(p);
  }
  EXPECT_EQ(stats_of(reap).objects_live, 1000u);
  for (void* p : all) strata_reap_free(reap, p);
  EXPECT_EQ(stats_of(reap).objects_live, 0u);
}

TEST(ReapApi, ResultsAreAligned16AndDistinctAndWritable) {
  ScopedReap reap;
  std::vector<std::pair<unsigned char*, std::size_t>> objects;
  for (std::size_t size = 0; size <= 20000; size += (size < 2048 ? 1 : 97)) {
    auto* p = static_cast<unsigned char*>(strata_reap_malloc(reap, size));
    ASSERT_NE(p, nullptr) << size;
    ASSERT_TRUE(aligned(p, 16)) << p << " for size " << size;
    ASSERT_GE(strata_reap_usable_size(reap, p), size);
    std::memset(p, static_cast<int>(size & 0xff), size);
    objects.emplace_back(p, size);
  }
  for (auto& [p, size] : objects)
    for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(p[i], static_cast<unsigned char>(size & 0xff)) << size;
}

TEST(ReapApi, FreeNullIsANoOp) {
  ScopedReap reap;
  strata_reap_free(reap, nullptr);
  EXPECT_EQ(stats_of(reap).objects_live, 0u);
}

TEST(ReapApi, FreedObjectsLeaveTheStatistics) {
  ScopedReap reap;
  void* a = strata_reap_malloc(reap, 100);
  void* b = strata_reap_malloc(reap, 100000);
  EXPECT_EQ(stats_of(reap).objects_live, 2u);
  EXPECT_GE(stats_of(reap).bytes_live, 100100u);
  strata_reap_free(reap, a);
  EXPECT_EQ(stats_of(reap).objects_live, 1u);
  strata_reap_free(reap, b);
  EXPECT_EQ(stats_of(reap).objects_live, 0u);
  EXPECT_EQ(stats_of(reap).bytes_live, 0u);
}

TEST(ReapApi, UsableSizeCoversTheRequestAndIsWritable) {
  ScopedReap reap;
  EXPECT_EQ(strata_reap_usable_size(reap, nullptr), 0u);
  for (std::size_t size : {0u, 1u, 15u, 16u, 17u, 100u, 1024u, 1025u, 4000u, 4096u, 70000u, 1u << 20}) {
    auto* p = static_cast<char*>(strata_reap_malloc(reap, size));
    ASSERT_NE(p, nullptr);
    std::size_t usable = strata_reap_usable_size(reap, p);
    EXPECT_GE(usable, size);
    std::memset(p, 0x5a, usable);  // all of it belongs to the object (ASan would tell)
  }
}

TEST(ReapApi, CallocZeroesAndChecksOverflow) {
  ScopedReap reap;
  // Dirty some memory first, free it, so calloc may get it back.
  for (int i = 0; i < 64; ++i) {
    void* p = strata_reap_malloc(reap, 96);
    std::memset(p, 0xff, 96);
    strata_reap_free(reap, p);
  }
  for (std::size_t n : {1u, 3u, 12u, 1000u, 20000u}) {
    auto* p = static_cast<unsigned char*>(strata_reap_calloc(reap, n, 8));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < n * 8; ++i) ASSERT_EQ(p[i], 0) << n << " " << i;
  }
  errno = 0;
  EXPECT_EQ(strata_reap_calloc(reap, SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(strata_reap_calloc(reap, 3, SIZE_MAX / 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* p = strata_reap_calloc(reap, 0, 5);  // like malloc(0)
  EXPECT_NE(p, nullptr);
  // Still usable after the failures.
  auto* q = static_cast<int*>(strata_reap_calloc(reap, 10, sizeof(int)));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q[9], 0);
}

TEST(ReapApi, OutOfMemoryIsNullWithEnomemAndTheReapStaysUsable) {
  ScopedReap reap;
  auto* keep = static_cast<char*>(strata_reap_malloc(reap, 40));
  std::strcpy(keep, "still here");
  for (std::size_t size : {kHuge, SIZE_MAX, SIZE_MAX - 8, std::size_t{1} << 46}) {
    errno = 0;
    EXPECT_EQ(strata_reap_malloc(reap, size), nullptr) << size;
    EXPECT_EQ(errno, ENOMEM) << size;
  }
  EXPECT_STREQ(keep, "still here");
  void* p = strata_reap_malloc(reap, 40);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(stats_of(reap).objects_live, 2u);
}

TEST(ReapApi, ReallocOfNullIsMalloc) {
  ScopedReap reap;
  void* p = strata_reap_realloc(reap, nullptr, 77);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(strata_reap_usable_size(reap, p), 77u);
  EXPECT_EQ(stats_of(reap).objects_live, 1u);
}

TEST(ReapApi, ReallocKeepsContentsUpToTheSmallerSize) {
  ScopedReap reap;
  auto pattern = [](std::size_t step, std::size_t i) { return static_cast<unsigned char>(step * 31 + i * 7); };
  std::size_t size = 10;
  auto* p = static_cast<unsigned char*>(strata_reap_malloc(reap, size));
  for (std::size_t i = 0; i < size; ++i) p[i] = pattern(0, i);
  std::size_t step = 0;
  for (std::size_t next : {20u, 5000u, 3u, 100000u, 64u, 0u, 200u, 16u, 17u, 70000u, 1u}) {
    auto* q = static_cast<unsigned char*>(strata_reap_realloc(reap, p, next));
    ASSERT_NE(q, nullptr);
    ASSERT_TRUE(aligned(q, 16));
    ASSERT_GE(strata_reap_usable_size(reap, q), next);
    for (std::size_t i = 0; i < std::min(size, next); ++i)
      ASSERT_EQ(q[i], pattern(step, i)) << "realloc " << size << " -> " << next << " lost byte " << i;
    ++step;
    for (std::size_t i = 0; i < next; ++i) q[i] = pattern(step, i);
    p = q;
    size = next;
  }
  EXPECT_EQ(stats_of(reap).objects_live, 1u);
}

TEST(ReapApi, FailedReallocLeavesTheOldObjectIntact) {
  ScopedReap reap;
  auto* p = static_cast<char*>(strata_reap_malloc(reap, 300));
  std::memset(p, 'x', 300);
  errno = 0;
  EXPECT_EQ(strata_reap_realloc(reap, p, kHuge), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(p[i], 'x');
  EXPECT_GE(strata_reap_usable_size(reap, p), 300u);
  strata_reap_free(reap, p);  // still a valid object
  EXPECT_EQ(stats_of(reap).objects_live, 0u);
}

TEST(ReapApi, AlignedAllocRejectsNonPowersOfTwo) {
  ScopedReap reap;
  for (std::size_t alignment : {0u, 3u, 24u, 48u, 100u, 4097u}) {
    errno = 0;
    EXPECT_EQ(strata_reap_aligned_alloc(reap, alignment, 64), nullptr) << alignment;
    EXPECT_EQ(errno, EINVAL) << alignment;
  }
  EXPECT_EQ(stats_of(reap).objects_live, 0u);
}

TEST(ReapApi, AlignedAllocHonoursEveryPowerOfTwo) {
  ScopedReap reap;
  std::vector<void*> objects;
  for (std::size_t alignment = 1; alignment <= (std::size_t{1} << 21); alignment *= 2) {
    for (std::size_t size : {0u, 1u, 24u, 64u, 200u, 1000u, 3000u, 9000u, 70000u}) {
      void* p = strata_reap_aligned_alloc(reap, alignment, size);
      ASSERT_NE(p, nullptr) << alignment << " " << size;
      ASSERT_TRUE(aligned(p, alignment)) << p << " alignment " << alignment << " size " << size;
      ASSERT_TRUE(aligned(p, 16));
      ASSERT_GE(strata_reap_usable_size(reap, p), size);
      std::memset(p, 0x11, size);
      objects.push_back(p);
    }
  }
  EXPECT_EQ(stats_of(reap).objects_live, objects.size());
  for (std::size_t i = 0; i < objects.size(); i += 2) strata_reap_free(reap, objects[i]);
  EXPECT_EQ(stats_of(reap).objects_live, objects.size() / 2);
  errno = 0;
  EXPECT_EQ(strata_reap_aligned_alloc(reap, 64, kHuge), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(ReapApi, ClearFreesEverythingAndTheReapIsUsableAgain) {
  ScopedReap reap;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 10000; ++i) {
      auto* p = static_cast<int*>(strata_reap_malloc(reap, 8 + (i % 57)));
      ASSERT_NE(p, nullptr);
      *p = i;
    }
    strata_reap_malloc(reap, 300000);
    EXPECT_EQ(stats_of(reap).objects_live, 10001u);
    strata_reap_clear(reap);
    EXPECT_EQ(stats_of(reap).objects_live, 0u);
    EXPECT_EQ(stats_of(reap).bytes_live, 0u);
  }
}

TEST(ReapApi, StatisticsCountHeldMemory) {
  ScopedReap reap;
  strata_reap_stats empty = stats_of(reap);
  EXPECT_GE(empty.chunks, strata::test::kEmulator ? 0u : 1u);
  std::size_t usable = 0;
  for (int i = 0; i < 100000; ++i) usable += strata_reap_usable_size(reap, strata_reap_malloc(reap, 32));
  strata_reap_stats full = stats_of(reap);
  EXPECT_EQ(full.objects_live, 100000u);
  EXPECT_EQ(full.bytes_live, usable);  // the usable bytes of the live objects
  EXPECT_GE(full.bytes_live, 3200000u);
  EXPECT_GE(full.bytes_held, full.bytes_live);
  EXPECT_GT(full.chunks, empty.chunks);
}

TEST(ReapApi, ChildrenAreReapsOfTheirOwn) {
  ScopedReap root;
  strata_reap* child = strata_reap_create(root);
  ASSERT_NE(child, nullptr);
  void* a = strata_reap_malloc(root, 10);
  void* b = strata_reap_malloc(child, 10);
  EXPECT_EQ(stats_of(root).objects_live, 1u);
  EXPECT_EQ(stats_of(child).objects_live, 1u);
  strata_reap_free(child, b);
  strata_reap_free(root, a);
  strata_reap_destroy(child);
  EXPECT_EQ(stats_of(root).objects_live, 0u);
}

}  // namespace
