#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"

using namespace strata::layers;
using strata::test::FailingHeap;
using strata::test::FaultControl;

static_assert(Heap<FreelistHeap<FailingHeap>>);

TEST(FreelistHeap, ReusesFreedObjectsLastInFirstOut) {
  FaultControl::reset();
  FreelistHeap<FailingHeap> heap;
  void* a = heap.malloc(32);
  void* b = heap.malloc(32);
  void* c = heap.malloc(32);
  ASSERT_TRUE(a && b && c);
  heap.free(a);
  heap.free(b);
  heap.free(c);
  const std::size_t fetched = FaultControl::mallocs;
  EXPECT_EQ(heap.malloc(32), c);
  EXPECT_EQ(heap.malloc(32), b);
  EXPECT_EQ(heap.malloc(32), a);
  EXPECT_EQ(FaultControl::mallocs, fetched) << "served from the list without asking the parent";
  void* d = heap.malloc(32);
  EXPECT_EQ(FaultControl::mallocs, fetched + 1) << "empty list: the parent is asked";
  for (void* p : {a, b, c, d}) heap.free(p);
}

TEST(FreelistHeap, IgnoresSizesAsThePaperSays) {
  // Meant for one size: a freed small object is handed back for a larger request.
  FaultControl::reset();
  FreelistHeap<FailingHeap> heap;
  void* small = heap.malloc(16);
  heap.free(small);
  EXPECT_EQ(heap.malloc(4096), small);
  heap.free(small);
}

TEST(FreelistHeap, RoundsTinyRequestsUpToALink) {
  FaultControl::reset();
  FreelistHeap<FailingHeap> heap;
  void* p = heap.malloc(1);
  EXPECT_EQ(FaultControl::last_request, sizeof(void*));
  heap.free(p);
}

TEST(FreelistHeap, ReturnsNullWhenTheParentDoesButServesItsListFirst) {
  FaultControl::reset();
  FreelistHeap<FailingHeap> heap;
  void* a = heap.malloc(64);
  ASSERT_NE(a, nullptr);
  heap.free(a);
  FaultControl::fail_from_now();
  EXPECT_EQ(heap.malloc(64), a) << "cached object still available";
  errno = 0;
  EXPECT_EQ(heap.malloc(64), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  heap.free(a);
}

TEST(FreelistHeap, DestructorAndFlushReturnEverythingToTheParent) {
  FaultControl::reset();
  {
    FreelistHeap<FailingHeap> heap;
    std::vector<void*> objects;
    for (int i = 0; i < 10; ++i) objects.push_back(heap.malloc(48));
    for (void* p : objects) heap.free(p);
    EXPECT_EQ(FaultControl::live(), 10u) << "cached, not returned yet";
    heap.flush();
    EXPECT_EQ(FaultControl::live(), 0u);
    for (int i = 0; i < 5; ++i) heap.free(heap.malloc(48));
  }
  EXPECT_EQ(FaultControl::live(), 0u) << "the destructor drained the list";
}

TEST(FreelistHeap, FreeOfNullIsANoOp) {
  FaultControl::reset();
  FreelistHeap<FailingHeap> heap;
  heap.free(nullptr);
  void* p = heap.malloc(16);
  EXPECT_NE(p, nullptr) << "a null was not pushed onto the list";
  heap.free(p);
}

TEST(FreelistHeap, ClearForgetsTheListAndClearsAClearableParent) {
  FaultControl::reset();
  FreelistHeap<ChunkHeap<1024, FailingHeap>> heap;
  static_assert(ClearableHeap<decltype(heap)>);
  static_assert(!ClearableHeap<FreelistHeap<FailingHeap>>, "nothing to clear below");
  void* a = heap.malloc(32);
  heap.malloc(32);
  heap.free(a);
  heap.clear();
  EXPECT_EQ(FaultControl::live(), 0u) << "the chunk went back";
  void* b = heap.malloc(32);
  EXPECT_EQ(FaultControl::mallocs, 2u) << "a fresh chunk: the list was forgotten, not reused";
  heap.free(b);
}
