#include <gtest/gtest.h>

#include <cerrno>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;
using strata::test::FailingHeap;
using strata::test::FaultControl;

namespace {

// Four classes: 16, 32, 64, 128; anything bigger is "big".
constexpr std::size_t size_class(std::size_t size) {
  std::size_t c = 0;
  while ((std::size_t{16} << c) < size) ++c;
  return c;
}
constexpr std::size_t class_size(std::size_t c) { return std::size_t{16} << c; }

using Little = SizeHeap<FreelistHeap<FailingHeap>>;
using Big = SizeHeap<FailingHeap>;
using Seg = StrictSegHeap<4, size_class, class_size, Little, Big>;

static_assert(SizedHeap<Seg>);

}  // namespace

TEST(StrictSegHeap, GivesEachRequestItsClassSize) {
  FaultControl::reset();
  Seg heap;
  for (std::size_t request : {0u, 1u, 16u, 17u, 32u, 33u, 64u, 100u, 128u}) {
    void* p = heap.malloc(request);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(heap.getSize(p), class_size(size_class(request == 0 ? 1 : request))) << "request " << request;
    heap.free(p);
  }
}

TEST(StrictSegHeap, SendsBigRequestsToTheBigHeapWithTheirExactSize) {
  FaultControl::reset();
  Seg heap;
  void* p = heap.malloc(129);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(heap.getSize(p), 129u) << "not rounded: the big heap got the request as is";
  const std::size_t frees = FaultControl::frees;
  heap.free(p);
  EXPECT_EQ(FaultControl::frees, frees + 1) << "a big object goes straight back to the big heap";
}

TEST(StrictSegHeap, ReusesWithinAClassButNeverAcrossClasses) {
  FaultControl::reset();
  Seg heap;
  void* a = heap.malloc(30);  // class 1 (32)
  heap.free(a);
  void* b = heap.malloc(10);  // class 0: strict, does not take the free 32
  EXPECT_NE(b, a);
  void* c = heap.malloc(20);  // class 1: gets it back
  EXPECT_EQ(c, a);
  heap.free(b);
  heap.free(c);
}

TEST(StrictSegHeap, ReturnsAnObjectToTheBinItCameFrom) {
  FaultControl::reset();
  Seg heap;
  void* small = heap.malloc(20);   // bin of 32 bytes
  void* medium = heap.malloc(50);  // bin of 64 bytes
  ASSERT_NE(small, nullptr);
  ASSERT_NE(medium, nullptr);
  heap.free(small);
  heap.free(medium);
  void* again_medium = heap.malloc(64);
  void* again_small = heap.malloc(17);
  EXPECT_EQ(again_medium, medium) << "the 64-byte bin got its object back";
  EXPECT_EQ(again_small, small) << "the 32-byte bin got its object back";
  heap.free(again_medium);
  heap.free(again_small);
}

TEST(StrictSegHeap, ReturnsNullWhenABinOrTheBigHeapFails) {
  FaultControl::reset();
  Seg heap;
  FaultControl::fail_from_now();
  errno = 0;
  EXPECT_EQ(heap.malloc(24), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.malloc(1000), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(StrictSegHeap, FreeOfNullIsANoOp) {
  FaultControl::reset();
  Seg heap;
  heap.free(nullptr);
  EXPECT_EQ(FaultControl::frees, 0u);
}

TEST(StrictSegHeap, ReleasesEverythingOnDestruction) {
  FaultControl::reset();
  {
    Seg heap;
    void* ps[40];
    for (std::size_t i = 0; i < 40; ++i) ps[i] = heap.malloc(i * 5);
    for (void* p : ps) heap.free(p);
  }
  EXPECT_EQ(FaultControl::live(), 0u);
}

TEST(StrictSegHeap, PassesTheModelTest) {
  FaultControl::reset();
  Seg heap;
  strata::test::run_heap_model(heap, {.seed = 3, .operations = 50000, .max_size = 512});
}
