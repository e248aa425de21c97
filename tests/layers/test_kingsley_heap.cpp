#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "support/size_classes.hpp"

using namespace strata::layers;
using strata::test::FailingHeap;
using strata::test::FaultControl;

static_assert(SizedHeap<KingsleyHeap>);
static_assert(std::is_default_constructible_v<KingsleyHeap>);

TEST(KingsleyHeap, SizeClassesArePowersOfTwoFrom16To1GiB) {
  using namespace kingsley;
  for (std::size_t c = 0; c < kNumBins; ++c) EXPECT_EQ(class_size(c), std::size_t{16} << c);
  EXPECT_EQ(size_class(0), 0u);
  EXPECT_EQ(size_class(4097), 9u);
  EXPECT_EQ(size_class(std::size_t{1} << 30), 26u);
  // The last class's one byte more is kNumBins: beyond the last bin.
  ASSERT_NO_FATAL_FAILURE(strata::test::expect_size_classes_consistent(size_class, class_size, kNumBins));
}

TEST(KingsleyHeap, RoundsEveryRequestUpToItsClassAndAligns) {
  KingsleyHeap heap;
  for (std::size_t request : {0u, 1u, 15u, 16u, 17u, 100u, 1000u, 5000u, 70000u}) {
    void* p = heap.malloc(request);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
    EXPECT_EQ(heap.getSize(p), kingsley::class_size(kingsley::size_class(request)));
    heap.free(p);
  }
}

TEST(KingsleyHeap, FreshBlocksAreConsecutiveInTheBreak) {
  KingsleyHeap heap;
  char* a = static_cast<char*>(heap.malloc(200));  // class 256: block 16 + 256
  char* b = static_cast<char*>(heap.malloc(200));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b - a, 16 + 256);
  heap.free(a);
  heap.free(b);
}

TEST(KingsleyHeap, ReusesFreedObjectsOfTheSameClassLifo) {
  KingsleyHeap heap;
  void* a = heap.malloc(40);
  void* b = heap.malloc(60);  // same class (64)
  heap.free(a);
  heap.free(b);
  EXPECT_EQ(heap.malloc(33), b);
  EXPECT_EQ(heap.malloc(64), a);
  void* other = heap.malloc(20);  // class 32: must not reuse the 64s
  EXPECT_NE(other, a);
  EXPECT_NE(other, b);
  heap.free(a);
  heap.free(b);
  heap.free(other);
}

TEST(KingsleyHeap, RequestsAbove1GiBAreMappedAndUnmapped) {
  KingsleyHeap heap;
  const std::size_t big = (std::size_t{1} << 30) + 1;
  auto* p = static_cast<unsigned char*>(heap.malloc(big));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
  EXPECT_EQ(heap.getSize(p), big) << "big objects keep their exact size";
  p[0] = 1;
  p[big - 1] = 2;
  heap.free(p);
}

TEST(KingsleyHeap, ImpossibleRequestsAreNullWithEnomem) {
  KingsleyHeap heap;
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX / 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  heap.free(nullptr);
}

TEST(KingsleyHeap, ItsChainPassesOutOfMemoryOnAsNull) {
  // The same chain with a parent that fails on demand in place of the break.
  using Chain = StrictSegHeap<kingsley::kNumBins, kingsley::size_class, kingsley::class_size,
                              SizeHeap<FreelistHeap<FailingHeap>>, SizeHeap<FailingHeap>>;
  FaultControl::reset();
  {
    Chain heap;
    void* kept = heap.malloc(100);
    ASSERT_NE(kept, nullptr);
    heap.free(kept);
    FaultControl::fail_from_now();
    EXPECT_EQ(heap.malloc(100), kept) << "the free list still serves";
    errno = 0;
    EXPECT_EQ(heap.malloc(100), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    EXPECT_EQ(heap.malloc(10), nullptr);
    heap.free(kept);
  }
  EXPECT_EQ(FaultControl::live(), 0u);
}

TEST(KingsleyHeap, PassesTheModelTest) {
  KingsleyHeap heap;
  strata::test::run_heap_model(heap, {.seed = 21});
}

TEST(KingsleyHeap, PassesTheModelTestWithLargerObjects) {
  KingsleyHeap heap;
  strata::test::run_heap_model(heap, {.seed = 22, .operations = 8000, .max_live = 200, .max_size = 1 << 18});
}
