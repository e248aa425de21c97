#include <gtest/gtest.h>

#include <cerrno>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;
using strata::test::FailingHeap;
using strata::test::FaultControl;

namespace {
// Small: KingsleyHeap (class sizes); big: exact sizes counted by FaultControl.
using Hybrid = HybridHeap<256, KingsleyHeap, SizeHeap<FailingHeap>>;
static_assert(SizedHeap<Hybrid>);
}  // namespace

TEST(HybridHeap, RoutesBySizeBoundary) {
  FaultControl::reset();
  Hybrid heap;
  void* small = heap.malloc(256);
  EXPECT_EQ(FaultControl::mallocs, 0u) << "<= BigSize: the small heap";
  EXPECT_EQ(heap.getSize(small), 256u);
  void* big = heap.malloc(257);
  EXPECT_EQ(FaultControl::mallocs, 1u) << "> BigSize: the big heap";
  EXPECT_EQ(heap.getSize(big), 257u);
  heap.free(small);
  EXPECT_EQ(FaultControl::frees, 0u);
  heap.free(big);
  EXPECT_EQ(FaultControl::frees, 1u) << "freed back to the heap it came from";
  EXPECT_EQ(heap.malloc(200), small) << "the small heap recycled its object";
  heap.free(small);
}

TEST(HybridHeap, ReturnsNullWhenTheChosenHeapFails) {
  FaultControl::reset();
  Hybrid heap;
  FaultControl::fail_from_now();
  errno = 0;
  EXPECT_EQ(heap.malloc(1000), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* small = heap.malloc(100);
  EXPECT_NE(small, nullptr) << "the small heap is unaffected";
  heap.free(small);
  heap.free(nullptr);
}

TEST(HybridHeap, PassesTheModelTest) {
  FaultControl::reset();
  {
    Hybrid heap;
    strata::test::run_heap_model(heap, {.seed = 15, .operations = 50000});
  }
  EXPECT_EQ(FaultControl::live(), 0u);
}
