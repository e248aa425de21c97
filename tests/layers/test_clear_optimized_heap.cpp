// ClearOptimizedHeap over a TaggedStreamHeap (a reap without nesting):
// freed objects first, an exact fit or the smallest slot at least twice the
// request (cut, its rest bumped through), the inline window closed while freed
// objects wait and fit, pure bumping after clear().
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

TEST(ClearOptimizedHeap, AFreedSlotLessThanTwiceTheRequestWaitsForItsOwnSize) {
  Reap heap;
  strata::test::RegionOwner<Reap> owner{heap};
  auto* a = static_cast<char*>(owner.malloc(64));  // an 80-byte slot
  owner.malloc(8);
  owner.free(a);
  EXPECT_EQ(heap.waitingObjects(), 1u);
  EXPECT_NE(heap.cursor().flags & kInlineClosedFreed, 0u) << "the first free closes the inline window";
  void* b = owner.malloc(48);  // a 64-byte slot: bumped (handed out whole, the 80-byte slot would keep the window shut)
  EXPECT_NE(b, a);
  EXPECT_EQ(heap.getSize(b), 63u);
  EXPECT_EQ(heap.waitingObjects(), 1u);
  EXPECT_EQ(heap.cursor().flags, 0u) << "open until the next free";
  EXPECT_EQ(owner.malloc(64), a) << "a request of its own size takes it";
  EXPECT_EQ(heap.waitingObjects(), 0u);
  EXPECT_EQ(heap.liveObjects(), 3u);
  EXPECT_EQ(heap.liveBytes(), 79u + 15u + 63u);
}

// A slot at least twice the request is cut, and its rest lent to the stream:
// the inline window opens over it, so the next requests bump through it.
TEST(ClearOptimizedHeap, TheRestOfACutSlotIsBumpedThrough) {
  Reap heap;
  strata::test::RegionOwner<Reap> owner{heap};
  auto* a = static_cast<char*>(owner.malloc(1000));  // a 1008-byte slot
  void* keep = owner.malloc(8);
  owner.free(a);
  void* b = owner.malloc(100);  // 112 bytes cut off; 896 lent
  EXPECT_EQ(b, a);
  EXPECT_EQ(heap.cursor().flags, 0u) << "the window is open over the rest";
  EXPECT_EQ(heap.cursor().bump, addr(a) + 112);
  EXPECT_EQ(heap.cursor().limit, addr(a) + 1008);
  void* c = owner.malloc(100);  // bumped from the rest
  EXPECT_EQ(addr(c), addr(a) + 112);
  EXPECT_EQ(heap.waitingObjects(), 0u);
  EXPECT_EQ(heap.liveObjects(), 3u);
  EXPECT_EQ(heap.liveBytes(), 111u + 111u + 15u);
  // Too big for the rest (784 bytes): the rest waits, the stream's own run bumps.
  void* d = owner.malloc(2000);
  EXPECT_GT(addr(d), addr(keep));
  EXPECT_EQ(heap.waitingObjects(), 1u);
  EXPECT_EQ(heap.liveObjects(), 4u);
  EXPECT_EQ(heap.liveBytes(), 111u + 111u + 15u + 2015u);
  void* bumped = owner.malloc(700);  // a 704-byte slot: less than half the 784-byte rest is left waiting
  EXPECT_GT(addr(bumped), addr(d));
  EXPECT_EQ(heap.waitingObjects(), 1u);
  void* e = owner.malloc(768);  // a 784-byte slot: the rest, an exact fit
  EXPECT_EQ(addr(e), addr(a) + 224);
  EXPECT_EQ(heap.getSize(e), 783u);
  EXPECT_EQ(heap.waitingObjects(), 0u);
  owner.free(c);
  owner.free(e);
  EXPECT_EQ(heap.liveObjects(), 4u);
  EXPECT_EQ(heap.liveBytes(), 111u + 15u + 2015u + 703u);
}

// Waiting objects no request fits do not keep every allocation out of line:
// a request that none of them serves opens the window until the next free.
TEST(ClearOptimizedHeap, ARequestNothingWaitingFitsOpensTheWindowUntilTheNextFree) {
  Reap heap;
  strata::test::RegionOwner<Reap> owner{heap};
  void* small = owner.malloc(8);
  owner.malloc(8);
  owner.free(small);
  EXPECT_NE(heap.cursor().flags & kInlineClosedFreed, 0u);
  void* big = owner.malloc(200);  // nothing waiting is this big
  EXPECT_EQ(heap.waitingObjects(), 1u);
  EXPECT_EQ(heap.cursor().flags, 0u) << "the window is open although an object waits";
  EXPECT_GT(heap.cursor().limit, heap.cursor().bump);
  owner.malloc(300);  // big is not the last object any more (its free is no un-bump)
  owner.free(big);
  EXPECT_NE(heap.cursor().flags & kInlineClosedFreed, 0u) << "a free closes it again";
  EXPECT_EQ(owner.malloc(8), small) << "and the waiting objects come first";
}

// WaitBytes: freed objects wait while the stream bumps on, until that many
// bytes wait (the window closes and they come first) or a request needs the
// stream's next run.
TEST(ClearOptimizedHeap, FreedObjectsWaitUntilWaitBytesDoOrTheRunIsUsedUp) {
  using Waiting = ClearOptimizedHeap<TaggedStreamHeap<RegionChunkHeap<ChunkSource>>, 256>;
  Waiting heap;
  strata::test::RegionOwner<Waiting> owner{heap};
  void* a = owner.malloc(100);  // a 112-byte slot: 111 bytes freed
  owner.malloc(8);
  owner.free(a);
  EXPECT_EQ(heap.waitingObjects(), 1u);
  EXPECT_EQ(heap.cursor().flags, 0u) << "111 of 256 bytes wait: the stream bumps on";
  void* b = owner.malloc(100);
  EXPECT_NE(b, a);
  void* c = owner.malloc(150);  // a 160-byte slot: 270 bytes wait once it is freed
  owner.malloc(8);
  owner.free(c);
  EXPECT_NE(heap.cursor().flags & kInlineClosedFreed, 0u) << "WaitBytes wait: the window closes";
  EXPECT_EQ(owner.malloc(100), a);
  EXPECT_NE(heap.cursor().flags & kInlineClosedFreed, 0u) << "c still waits";
  EXPECT_EQ(owner.malloc(150), c);
  EXPECT_EQ(heap.cursor().flags, 0u) << "nothing waits: bumping again";
  owner.free(b);  // 111 bytes wait again
  std::size_t bumped = 0;
  for (void* p = owner.malloc(100); p != b; p = owner.malloc(100)) ASSERT_LT(++bumped, 1000u);
  EXPECT_GT(bumped, 10u) << "bumped on through the run before b came back";
  EXPECT_EQ(heap.waitingObjects(), 0u);
}

TEST(ClearOptimizedHeap, AnExactFitOrTheSmallestSlotAtLeastTwiceTheRequest) {
  Reap heap;
  strata::test::RegionOwner<Reap> owner{heap};
  std::vector<void*> objects;
  for (std::size_t size : {200u, 40u, 100u, 30u}) {  // slots of 208, 48, 112 and 32 bytes
    objects.push_back(owner.malloc(size));
    owner.malloc(1);  // keeps them apart
  }
  for (void* p : objects) owner.free(p);
  EXPECT_EQ(owner.malloc(30), objects[3]);   // exact
  EXPECT_EQ(owner.malloc(40), objects[1]);   // exact
  EXPECT_EQ(owner.malloc(40), objects[2]);   // 112 bytes is the smallest slot twice 48: cut, the rest lent
  void* bumped = owner.malloc(150);          // a 160-byte slot: the 208-byte one is less than twice that
  EXPECT_NE(bumped, objects[0]);
  EXPECT_EQ(owner.malloc(192), objects[0]);  // exact
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

TEST(ClearOptimizedHeap, PassesTheHeapModelWhileFreedObjectsWait) {
  using Waiting = ClearOptimizedHeap<TaggedStreamHeap<RegionChunkHeap<ChunkSource>>, 8192>;
  Waiting heap;
  strata::test::RegionOwner<Waiting> owner{heap};
  strata::test::run_heap_model(owner, {.seed = 8, .operations = 40000, .max_size = 9000});
  EXPECT_EQ(heap.liveObjects(), 0u);
  EXPECT_EQ(heap.liveBytes(), 0u);
}

}  // namespace
