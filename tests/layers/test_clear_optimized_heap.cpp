// ClearOptimizedHeap over a TaggedStreamHeap (a reap without nesting):
// freed objects first, best fit across sizes with the rest split off, the
// inline window closed while freed objects wait, pure bumping after clear().
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "region_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

namespace {

using namespace strata::layers;
using Reap = ClearOptimizedHeap<TaggedStreamHeap<RegionChunkHeap<ChunkSource>>>;
static_assert(SizedHeap<Reap> && ClearableHeap<Reap>);

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(ClearOptimizedHeap, AFreedObjectServesAnySmallerRequest) {
  Reap heap;
  strata::test::RegionOwner<Reap> owner{heap};
  auto* a = static_cast<char*>(owner.malloc(64));  // an 80-byte slot
  owner.malloc(8);
  owner.free(a);
  EXPECT_EQ(heap.waitingObjects(), 1u);
  EXPECT_NE(heap.cursor().flags & kInlineClosedFreed, 0u) << "the first free closes the inline window";
  void* b = owner.malloc(48);  // a 64-byte slot: the freed one, split
  EXPECT_EQ(b, a);
  EXPECT_EQ(heap.waitingObjects(), 1u) << "the 16-byte rest waits";
  void* c = owner.malloc(1);
  EXPECT_EQ(addr(c), addr(a) + 64);
  EXPECT_EQ(heap.waitingObjects(), 0u);
  EXPECT_EQ(heap.cursor().flags, 0u) << "nothing waits: pure bumping again";
  EXPECT_EQ(heap.liveObjects(), 3u);
}

TEST(ClearOptimizedHeap, BestFitTakesTheSmallestWaitingSlotThatFits) {
  Reap heap;
  strata::test::RegionOwner<Reap> owner{heap};
  std::vector<void*> objects;
  for (std::size_t size : {200u, 40u, 100u, 30u}) {
    objects.push_back(owner.malloc(size));
    owner.malloc(1);  // keeps them apart
  }
  for (void* p : objects) owner.free(p);
  EXPECT_EQ(owner.malloc(90), objects[2]);   // 112-byte slot fits 90 best
  EXPECT_EQ(owner.malloc(30), objects[3]);   // exact
  EXPECT_EQ(owner.malloc(35), objects[1]);   // 48-byte slot
  EXPECT_EQ(owner.malloc(150), objects[0]);  // 208-byte slot, the rest split off
  void* large = owner.malloc(20000);
  owner.free(large);
  EXPECT_EQ(owner.malloc(19000), large);
}

TEST(ClearOptimizedHeap, ClearForgetsFreedObjectsAndBumpsAgain) {
  Reap heap;
  strata::test::RegionOwner<Reap> owner{heap};
  std::vector<void*> objects;
  for (int i = 0; i < 100; ++i) objects.push_back(owner.malloc(32));
  for (void* p : objects) owner.free(p);
  heap.clear();
  EXPECT_EQ(heap.waitingObjects(), 0u);
  EXPECT_EQ(heap.liveObjects(), 0u);
  EXPECT_EQ(heap.liveBytes(), 0u);
  void* first = owner.malloc(32);
  for (int i = 1; i < 50; ++i) ASSERT_EQ(addr(owner.malloc(32)), addr(first) + 48u * static_cast<unsigned>(i));
}

// free() does not count anything: the statistics walk the stream lazily, and
// takeSmall walks before a split changes tags. Frees and splits of objects
// the walk has not reached yet must still leave the figures exact.
TEST(ClearOptimizedHeap, StatisticsStayExactWhenFreesAndSplitsComeBeforeTheWalk) {
  Reap heap;
  strata::test::RegionOwner<Reap> owner{heap};
  std::mt19937_64 rng(11);
  std::vector<void*> live;
  std::size_t live_bytes = 0;
  std::size_t checks = 0;
  for (int step = 0; step < 30000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      const std::size_t size = rng() % 50 == 0 ? 4100 + rng() % 3000 : 1 + rng() % 300;
      void* p = owner.malloc(size);
      ASSERT_NE(p, nullptr);
      live.push_back(p);
      live_bytes += heap.getSize(p);
    } else {
      const std::size_t i = rng() % live.size();
      live_bytes -= heap.getSize(live[i]);
      owner.free(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
    if (step % 997 == 0) {  // seldom: most frees and splits land on slots not walked yet
      ASSERT_EQ(heap.liveObjects(), live.size()) << "step " << step;
      ASSERT_EQ(heap.liveBytes(), live_bytes) << "step " << step;
      ++checks;
    }
  }
  EXPECT_GT(checks, 20u);
  EXPECT_EQ(heap.liveObjects(), live.size());
  EXPECT_EQ(heap.liveBytes(), live_bytes);
}

TEST(ClearOptimizedHeap, PassesTheHeapModel) {
  Reap heap;
  strata::test::RegionOwner<Reap> owner{heap};
  strata::test::run_heap_model(owner, {.seed = 6, .operations = 40000, .max_size = 9000});
  EXPECT_EQ(heap.liveObjects(), 0u);
  EXPECT_EQ(heap.liveBytes(), 0u);
  heap.clear();
  strata::test::run_heap_model(owner, {.seed = 7, .operations = 20000, .max_size = 100000});
}

}  // namespace
