// The real reap's promises beyond the API: header-free bump allocation, reuse
// of freed memory, clear back to pure bumping, the chunk policy.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "reap_test_support.hpp"

namespace {

using strata::test::ScopedReap;
using strata::test::stats_of;

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(ReapInternals, SmallObjectsHaveNoHeader) {
  ScopedReap reap;
  for (std::size_t size : {16u, 48u, 64u, 208u}) {
    void* first = strata_reap_malloc(reap, size);
    void* second = strata_reap_malloc(reap, size);
    EXPECT_EQ(addr(second) - addr(first), size) << "objects of " << size << " bytes are not packed";
  }
  // 100000 objects of 16 bytes cost barely more than 1.6 MB.
  ScopedReap dense;
  const std::size_t before = stats_of(dense).bytes_held;
  for (int i = 0; i < 100000; ++i) strata_reap_malloc(dense, 16);
  const std::size_t used = stats_of(dense).bytes_held - before;
  EXPECT_LT(used, 1600000u * 2);  // chunks double: at most half of the last chunk unused
  EXPECT_EQ(stats_of(dense).bytes_live, 1600000u);
}

TEST(ReapInternals, FreedObjectsAreReusedFirst) {
  ScopedReap reap;
  void* a = strata_reap_malloc(reap, 40);
  void* b = strata_reap_malloc(reap, 40);
  strata_reap_free(reap, a);
  strata_reap_free(reap, b);
  EXPECT_EQ(strata_reap_malloc(reap, 33), b);  // same size class, last freed first
  EXPECT_EQ(strata_reap_malloc(reap, 48), a);
  void* big = strata_reap_malloc(reap, 10000);
  strata_reap_free(reap, big);
  EXPECT_EQ(strata_reap_malloc(reap, 9000), big);  // a freed span of the same length
}

TEST(ReapInternals, ClearReturnsToPureBumping) {
  ScopedReap reap;
  std::vector<void*> objects;
  for (int i = 0; i < 100; ++i) objects.push_back(strata_reap_malloc(reap, 32));
  for (void* p : objects) strata_reap_free(reap, p);  // free lists full
  strata_reap_clear(reap);
  void* first = strata_reap_malloc(reap, 32);
  for (int i = 1; i < 50; ++i) {
    void* next = strata_reap_malloc(reap, 32);
    ASSERT_EQ(addr(next), addr(first) + 32u * static_cast<unsigned>(i)) << "not bumping after clear";
  }
}

TEST(ReapInternals, ChunksGrowGeometrically) {
  ScopedReap reap;
  for (int i = 0; i < (1 << 18); ++i) strata_reap_malloc(reap, 64);  // 16 MiB
  const strata_reap_stats s = stats_of(reap);
  EXPECT_LE(s.chunks, 13u) << "16 MiB in chunks doubling from 8 KiB takes about 11";
  EXPECT_GE(s.bytes_held, s.bytes_live);
}

TEST(ReapInternals, RepeatedRoundsReuseTheSameChunks) {
  ScopedReap reap;
  std::size_t held[5] = {};
  void* first[5] = {};
  for (int round = 0; round < 5; ++round) {
    first[round] = strata_reap_malloc(reap, 32);
    for (int i = 0; i < 60000; ++i) strata_reap_malloc(reap, 8 + (i % 57));
    held[round] = stats_of(reap).bytes_held;
    strata_reap_clear(reap);
    EXPECT_EQ(stats_of(reap).bytes_held, held[round]) << "clear kept what the round used";
  }
  for (int round = 1; round < 5; ++round) {
    EXPECT_EQ(held[round], held[0]) << "round " << round << " mapped more memory";
    EXPECT_EQ(first[round], first[0]) << "round " << round << " did not start at the same place";
  }
}

TEST(ReapInternals, ChunksASmallerRoundDidNotNeedGoBackAtTheNextClear) {
  ScopedReap reap;
  const std::size_t empty = stats_of(reap).bytes_held;
  for (int i = 0; i < 200000; ++i) strata_reap_malloc(reap, 48);  // ~10 MB
  strata_reap_clear(reap);
  const std::size_t big = stats_of(reap).bytes_held;
  EXPECT_GT(big, empty + 9000000);
  strata_reap_malloc(reap, 48);  // a small round
  strata_reap_clear(reap);
  EXPECT_LT(stats_of(reap).bytes_held, empty + (64u << 10)) << "unneeded chunks were kept";
  EXPECT_LE(stats_of(reap).chunks, 2u);
}

TEST(ReapInternals, HugeObjectsGoBackToTheSystemOnFree) {
  ScopedReap reap;
  const std::size_t before = stats_of(reap).bytes_held;
  void* p = strata_reap_malloc(reap, 4u << 20);
  EXPECT_GE(stats_of(reap).bytes_held, before + (4u << 20));
  strata_reap_free(reap, p);
  EXPECT_EQ(stats_of(reap).bytes_held, before);
}

TEST(ReapInternals, DestroyedReapsGiveMemoryBack) {
  // A reap per request: creating and destroying many must not accumulate.
  for (int i = 0; i < 20000; ++i) {
    strata_reap* r = strata_reap_create(nullptr);
    ASSERT_NE(r, nullptr);
    for (int j = 0; j < 20; ++j) strata_reap_malloc(r, 100);
    strata_reap_destroy(r);
  }
}

}  // namespace
