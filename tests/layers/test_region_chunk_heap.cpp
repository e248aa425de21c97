// RegionChunkHeap: runs from doubling chunks, kept and replayed across
// clear(), given back when a round no longer needs them.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <set>

#include "strata/layers.hpp"

namespace {

using strata::layers::ChunkSource;
using strata::layers::RegionChunkHeap;
using strata::layers::ChunkRun;

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

using Region = RegionChunkHeap<ChunkSource>;  // 8 KiB first chunk, doubling

TEST(RegionChunkHeap, RunsAreDistinctAlignedAndChunksDouble) {
  Region region;
  std::set<std::uintptr_t> runs;
  std::size_t total = 0;
  for (int i = 0; i < 12; ++i) {
    ChunkRun run = region.nextRun(100);
    ASSERT_NE(run.begin, nullptr);
    ASSERT_EQ(addr(run.begin) % 16, 0u);
    ASSERT_GE(static_cast<std::size_t>(run.end - run.begin), 100u);
    ASSERT_TRUE(runs.insert(addr(run.begin)).second);
    const std::size_t bytes = static_cast<std::size_t>(run.end - run.begin) + strata::layers::kChunkHeaderBytes;
    EXPECT_EQ(bytes, std::size_t{8192} << i) << "chunk " << i << " did not double";
    total += bytes;
  }
  EXPECT_EQ(region.chunks(), 12u);
  EXPECT_EQ(region.bytesHeld(), total);
  ChunkRun big = region.nextRun(std::size_t{100} << 20);  // larger than the doubling: its own size
  ASSERT_NE(big.begin, nullptr);
  EXPECT_GE(static_cast<std::size_t>(big.end - big.begin), std::size_t{100} << 20);
  region.releaseAll();
  EXPECT_EQ(region.mappings(), 0u);
  EXPECT_EQ(region.bytesHeld(), 0u);
}

TEST(RegionChunkHeap, ClearReplaysTheUsedChunksAndDropsTheUnneeded) {
  Region region;
  ChunkRun first = region.nextRun(100);
  for (int i = 0; i < 4; ++i) region.nextRun(100);
  region.clear();
  EXPECT_EQ(region.chunks(), 5u) << "clear keeps the chunks the round used";
  EXPECT_EQ(region.nextRun(100).begin, first.begin) << "and hands them out again in order";
  for (std::uint32_t round = 1; round < strata::layers::kIdleRoundsKept; ++round) {
    region.clear();  // rounds that needed one chunk...
    ASSERT_EQ(region.chunks(), 5u) << "...keep the idle chunks for a while (round " << round << ")";
    EXPECT_EQ(region.nextRun(100).begin, first.begin);
  }
  region.clear();
  EXPECT_EQ(region.chunks(), 1u) << "...and drop them after kIdleRoundsKept clears";
  EXPECT_EQ(region.nextRun(100).begin, first.begin);
  const ChunkRun second = region.nextRun(100);
  EXPECT_EQ(second.end - second.begin + strata::layers::kChunkHeaderBytes, 16384)
      << "growth doubles again from the largest chunk kept, not from the largest once held";
  errno = 0;
  EXPECT_EQ(region.nextRun(SIZE_MAX / 2).begin, nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

// A round that used one chunk and kept no other is cleared in place: the
// chunk stays the current run. Any other round needs the full clear().
TEST(RegionChunkHeap, ClearInPlaceOnlyWhenTheRoundUsedOneChunkAndKeptNoOther) {
  Region region;
  EXPECT_FALSE(region.clearInPlace()) << "no chunk yet";
  const ChunkRun first = region.nextRun(100);
  EXPECT_TRUE(region.clearInPlace());
  EXPECT_EQ(region.chunks(), 1u);
  region.nextRun(100);  // a second chunk in the same round
  EXPECT_FALSE(region.clearInPlace());
  EXPECT_EQ(region.chunks(), 2u) << "a refused clearInPlace changes nothing";
  region.clear();
  EXPECT_FALSE(region.clearInPlace()) << "a chunk waits to be replayed";
  EXPECT_EQ(region.nextRun(100).begin, first.begin);
  EXPECT_FALSE(region.clearInPlace()) << "the second chunk is kept, not in use";
}

TEST(RegionChunkHeap, AnAdoptedHomeChunkComesFirstAndIsNeverUnmapped) {
  ChunkSource outside;
  void* home = outside.map(8192);
  ASSERT_NE(home, nullptr);
  {
    Region region;
    region.adoptHome(home, 8192);
    EXPECT_EQ(region.nextRun(100).begin, static_cast<char*>(home) + strata::layers::kChunkHeaderBytes);
    ChunkRun second = region.nextRun(100);
    EXPECT_EQ(second.end - second.begin + strata::layers::kChunkHeaderBytes, 16384) << "the home counted as first";
    region.clear();
    for (std::uint32_t round = 0; round < strata::layers::kIdleRoundsKept; ++round) {
      region.nextRun(100);
      region.clear();
    }
    EXPECT_EQ(region.bytesHeld(), 0u) << "only the second chunk was the region's, and it went back";
  }  // destroying the region leaves the home mapping alone
  strata::layers::instrument::expose(home, 8192);
  static_cast<char*>(home)[8000] = 1;
  outside.unmap(home, 8192);
}

}  // namespace
