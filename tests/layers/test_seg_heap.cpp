#include <gtest/gtest.h>

#include <cerrno>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;
using strata::test::FailingHeap;
using strata::test::FaultControl;

namespace {

// Four classes: 16, 32, 64, 128; anything bigger belongs to the big heap.
constexpr std::size_t pow2_class(std::size_t s) { return s <= 16 ? 0 : static_cast<std::size_t>(std::bit_width(s - 1) - 4); }
constexpr std::size_t pow2_size(std::size_t c) { return std::size_t{16} << c; }

using Seg = SegHeap<4, pow2_class, pow2_size, AdaptHeap<DLList, NullHeap>, SizeHeap<FailingHeap>>;
static_assert(SizedHeap<Seg>);

}  // namespace

TEST(SegHeap, FetchesFromTheBigHeapWhenEveryBinIsEmpty) {
  FaultControl::reset();
  Seg heap;
  void* p = heap.malloc(20);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(heap.getSize(p), 20u) << "not rounded: SegHeap passes the request on";
  EXPECT_EQ(FaultControl::mallocs, 1u);
  heap.free(p);
  EXPECT_EQ(FaultControl::frees, 0u) << "a small object stays in its bin";
}

TEST(SegHeap, SearchesLargerBinsWhenTheRequestsBinIsEmpty) {
  FaultControl::reset();
  Seg heap;
  void* big = heap.malloc(100);  // filed under class 2 (64): 64 <= 100 < 128
  heap.free(big);
  const std::size_t fetched = FaultControl::mallocs;
  EXPECT_EQ(heap.malloc(20), big) << "class 1 empty: taken from class 2";
  EXPECT_EQ(FaultControl::mallocs, fetched);
  heap.free(big);
}

TEST(SegHeap, PrefersTheRequestsOwnBin) {
  FaultControl::reset();
  Seg heap;
  void* small = heap.malloc(32);
  void* large = heap.malloc(64);
  heap.free(large);
  heap.free(small);
  EXPECT_EQ(heap.malloc(30), small);
  EXPECT_EQ(heap.malloc(30), large);
  heap.free(small);
  heap.free(large);
}

TEST(SegHeap, NeverHandsOutAnObjectTooSmall) {
  FaultControl::reset();
  Seg heap;
  void* p = heap.malloc(40);  // filed under class 1 (32 <= 40 < 64)
  heap.free(p);
  void* q = heap.malloc(48);  // class 2: bin 1's 40-byte object could not hold it
  EXPECT_NE(q, p);
  EXPECT_GE(heap.getSize(q), 48u);
  heap.free(q);
}

TEST(SegHeap, SendsBigObjectsToTheBigHeap) {
  FaultControl::reset();
  Seg heap;
  void* p = heap.malloc(300);
  ASSERT_NE(p, nullptr);
  heap.free(p);
  EXPECT_EQ(FaultControl::frees, 1u);
}

TEST(SegHeap, RemoveTakesAFreeObjectOutOfItsBin) {
  FaultControl::reset();
  Seg heap;
  void* a = heap.malloc(64);
  void* b = heap.malloc(64);
  heap.free(a);
  heap.free(b);
  heap.remove(a);
  EXPECT_EQ(heap.malloc(64), b);
  void* c = heap.malloc(64);
  EXPECT_NE(c, a) << "a is no longer in the bin";
  heap.free(a);
  heap.free(b);
  heap.free(c);
}

TEST(SegHeap, ReturnsNullWhenTheBigHeapFails) {
  FaultControl::reset();
  Seg heap;
  void* kept = heap.malloc(60);
  heap.free(kept);
  FaultControl::fail_from_now();
  EXPECT_EQ(heap.malloc(10), kept) << "bins still serve";
  errno = 0;
  EXPECT_EQ(heap.malloc(10), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  heap.free(nullptr);
  heap.free(kept);
}

TEST(SegHeap, PassesTheModelTest) {
  FaultControl::reset();
  {
    SegHeap<9, pow2_class, pow2_size, AdaptHeap<DLList, NullHeap>, SizeHeap<FailingHeap>> heap;
    strata::test::run_heap_model(heap, {.seed = 14, .operations = 50000});
  }
  EXPECT_EQ(FaultControl::live(), 0u) << "the destructor handed every binned object back";
}

TEST(SegHeap, FlushHandsBinnedObjectsBackToTheBigHeap) {
  FaultControl::reset();
  Seg heap;
  void* a = heap.malloc(20);
  void* b = heap.malloc(100);
  heap.free(a);
  heap.free(b);
  EXPECT_EQ(FaultControl::live(), 2u);
  heap.flush();
  EXPECT_EQ(FaultControl::live(), 0u);
  void* c = heap.malloc(20);
  EXPECT_EQ(FaultControl::mallocs, 3u) << "bins are empty after flush";
  heap.free(c);
}

TEST(SegHeap, GivesObjectsSmallerThanEveryClassBackToTheBigHeap) {
  FaultControl::reset();
  Seg heap;
  void* tiny = heap.malloc(8);  // from the big heap; no bin may hold 8 bytes
  heap.free(tiny);
  EXPECT_EQ(FaultControl::frees, 1u);
}

TEST(SegHeap, HidesTheParentsObjectLevelExtrasAndClearsOnlyWithAClearableParent) {
  static_assert(!strata::test::ReallocHeap<SegHeap<4, pow2_class, pow2_size, AdaptHeap<DLList, NullHeap>,
                                                   SizeHeap<MallocHeap>>>);
  static_assert(!ClearableHeap<Seg>);
  FaultControl::reset();
  SegHeap<4, pow2_class, pow2_size, AdaptHeap<DLList, NullHeap>, SizeHeap<ChunkHeap<4096, FailingHeap>>> heap;
  static_assert(ClearableHeap<decltype(heap)>);
  void* a = heap.malloc(40);
  heap.free(a);
  heap.clear();
  EXPECT_EQ(FaultControl::live(), 0u);
  EXPECT_NE(heap.malloc(40), nullptr);
  EXPECT_EQ(FaultControl::mallocs, 2u) << "the bin was emptied: a fresh chunk serves the request";
}
