// strata::Random, the one generator of the workloads, benchmarks and lab:
// its stream is pinned to values computed by an independent implementation
// of splitmix64 and xoshiro256** (the workloads' stored checksums depend on
// it), and its range helpers stay in range.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "strata/random.hpp"

namespace {

TEST(Random, Splitmix64MatchesThePublishedReferenceStream) {
  std::uint64_t state = 1234567;
  EXPECT_EQ(strata::Random::splitmix64(state), 6457827717110365317ULL);
  EXPECT_EQ(strata::Random::splitmix64(state), 3203168211198807973ULL);
  EXPECT_EQ(strata::Random::splitmix64(state), 9817491932198370423ULL);
}

TEST(Random, Xoshiro256StarStarStreamIsPinnedForTheWorkloadsDefaultSeed) {
  strata::Random random(1);
  EXPECT_EQ(random.next(), 0xb3f2af6d0fc710c5ULL);
  EXPECT_EQ(random.next(), 0x853b559647364ceaULL);
  EXPECT_EQ(random.next(), 0x92f89756082a4514ULL);
  EXPECT_EQ(random.next(), 0x642e1c7bc266a3a7ULL);
}

TEST(Random, SeedZeroStillGivesANonZeroStream) {
  strata::Random random(0);
  EXPECT_EQ(random.next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(random.next(), 0xbf6e1f784956452aULL);
}

TEST(Random, BelowIsTheHighWordOfTheProduct) {
  strata::Random random(42);
  EXPECT_EQ(random.below(1000), 83U);
  EXPECT_EQ(random.below(1000), 378U);
  EXPECT_EQ(random.below(1000), 680U);
}

TEST(Random, RangesStayInsideTheirBoundsAndReachBothEnds) {
  strata::Random random(7);
  std::vector<int> seen(6, 0);
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t v = random.between(3, 8);
    ASSERT_GE(v, 3U);
    ASSERT_LE(v, 8U);
    ++seen[v - 3];
    const double u = random.unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
  for (int count : seen) EXPECT_GT(count, 1000);  // ~1667 each
  EXPECT_FALSE(random.chance(0.0));
  EXPECT_TRUE(random.chance(1.0));
}

TEST(Random, EqualSeedsGiveEqualStreamsAndDifferentSeedsDiffer) {
  strata::Random a(99), b(99), c(100);
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
}

}  // namespace
