#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;

static_assert(SizedHeap<KingsleyCoalescingHeap>);

TEST(KingsleyCoalescingHeap, SplitsChunksToTheRequestNotToKingsleysClass) {
  KingsleyCoalescingHeap heap;
  for (std::size_t request : {0u, 1u, 16u, 17u, 100u, 1000u, 5000u, 70000u}) {
    void* p = heap.malloc(request);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
    const std::size_t chunk = request <= 16 ? 16 : (request + 15) / 16 * 16;
    EXPECT_GE(heap.getSize(p), chunk) << request;
    EXPECT_LT(heap.getSize(p), chunk + 32) << request << ": a tail of 32 bytes or more is split off";
    heap.free(p);
  }
}

TEST(KingsleyCoalescingHeap, FreedNeighboursServeALargerClass) {
  // KingsleyHeap never gives two freed 64-byte objects to a 128-byte request; coalescing does.
  KingsleyCoalescingHeap heap;
  char* a = static_cast<char*>(heap.malloc(64));
  char* b = static_cast<char*>(heap.malloc(64));
  char* guard = static_cast<char*>(heap.malloc(64));
  ASSERT_TRUE(a && b && guard);
  ASSERT_EQ(b, a + 64 + 16) << "neighbours in the break";
  heap.free(a);
  heap.free(b);
  void* both = heap.malloc(128);  // the merged 144 bytes (16 left over: not split)
  EXPECT_EQ(both, a);
  heap.free(both);
  heap.free(guard);
}

TEST(KingsleyCoalescingHeap, SplitsALargeFreeChunkForASmallClass) {
  KingsleyCoalescingHeap heap;
  char* big = static_cast<char*>(heap.malloc(4096));
  void* guard = heap.malloc(16);
  ASSERT_TRUE(big && guard);
  heap.free(big);
  void* small = heap.malloc(20);  // class 32, from the front of the 4096-byte chunk
  EXPECT_EQ(small, big);
  EXPECT_EQ(heap.getSize(small), 32u);
  void* next = heap.malloc(20);
  EXPECT_EQ(next, big + 32 + 16) << "the rest of the split chunk serves the next request";
  heap.free(small);
  heap.free(next);
  heap.free(guard);
}

TEST(KingsleyCoalescingHeap, RequestsAbove1GiBAreMapped) {
  KingsleyCoalescingHeap heap;
  const std::size_t big = (std::size_t{1} << 30) + 1;
  auto* p = static_cast<unsigned char*>(heap.malloc(big));
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(ChunkHeader::of(p)->has(ChunkHeader::kMmapped));
  p[0] = 1;
  p[big - 1] = 2;
  heap.free(p);
}

TEST(KingsleyCoalescingHeap, ImpossibleRequestsAreNullWithEnomem) {
  KingsleyCoalescingHeap heap;
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  heap.free(nullptr);
}

TEST(KingsleyCoalescingHeap, PassesTheModelTest) {
  KingsleyCoalescingHeap heap;
  strata::test::run_heap_model(heap, {.seed = 41});
}

TEST(KingsleyCoalescingHeap, PassesTheModelTestWithLargerObjects) {
  KingsleyCoalescingHeap heap;
  strata::test::run_heap_model(heap, {.seed = 42, .operations = 8000, .max_live = 200, .max_size = 1 << 18});
}

TEST(KingsleyCoalescingHeap, UsesLessOfTheBreakThanKingsleyWhenSizesChange) {
  // Phases of one size class each, one object in 16 of every phase kept: Kingsley's freed
  // objects serve no other class, coalesced ones serve the next phase.
  auto run = [](auto& heap) {
    std::vector<void*> kept;
    for (std::size_t size = 16; size <= 4096; size *= 2) {
      std::vector<void*> phase;
      for (int i = 0; i < 2000; ++i) phase.push_back(heap.malloc(size));
      for (std::size_t i = 0; i < phase.size(); ++i) {
        if (i % 16 == 0)
          kept.push_back(phase[i]);
        else
          heap.free(phase[i]);
      }
    }
    for (void* p : kept) heap.free(p);
  };
  const std::size_t start = SbrkHeap<>::bytes_used();
  {
    KingsleyCoalescingHeap coalescing;
    run(coalescing);
  }
  const std::size_t coalescing_bytes = SbrkHeap<>::bytes_used() - start;
  {
    KingsleyHeap kingsley;
    run(kingsley);
  }
  const std::size_t kingsley_bytes = SbrkHeap<>::bytes_used() - start - coalescing_bytes;
  // At least a quarter less: half of the paper's average saving (§8: 50%).
  EXPECT_LT(coalescing_bytes * 4, kingsley_bytes * 3)
      << "coalescing " << coalescing_bytes << " kingsley " << kingsley_bytes;
}
