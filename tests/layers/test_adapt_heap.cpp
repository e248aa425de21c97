#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;
using strata::test::FailingHeap;
using strata::test::FaultControl;

static_assert(Heap<AdaptHeap<SLList, FailingHeap>>);
static_assert(Heap<AdaptHeap<DLList, NullHeap>>);

TEST(SLList, IsLastInFirstOut) {
  alignas(16) char objects[3][16];
  SLList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.get(), nullptr);
  for (auto& o : objects) list.insert(o);
  EXPECT_EQ(list.get(), objects[2]);
  EXPECT_EQ(list.get(), objects[1]);
  EXPECT_EQ(list.get(), objects[0]);
  EXPECT_TRUE(list.empty());
}

TEST(DLList, IsFirstInFirstOut) {
  alignas(16) char objects[3][16];
  DLList list;
  for (auto& o : objects) list.insert(o);
  EXPECT_EQ(list.get(), objects[0]);
  EXPECT_EQ(list.get(), objects[1]);
  EXPECT_EQ(list.get(), objects[2]);
  EXPECT_EQ(list.get(), nullptr);
  EXPECT_TRUE(list.empty());
}

TEST(DLList, RemovesFromAnywhere) {
  alignas(16) char objects[5][16];
  DLList list;
  for (auto& o : objects) list.insert(o);
  list.remove(objects[2]);  // middle
  list.remove(objects[0]);  // head
  list.remove(objects[4]);  // tail
  EXPECT_EQ(list.get(), objects[1]);
  EXPECT_EQ(list.get(), objects[3]);
  EXPECT_TRUE(list.empty());
  list.insert(objects[1]);
  list.remove(objects[1]);  // the only one
  EXPECT_TRUE(list.empty());
  list.insert(objects[3]);
  EXPECT_EQ(list.get(), objects[3]) << "head and tail were reset properly";
}

TEST(AdaptHeap, WithSLListReusesLifo) {
  FaultControl::reset();
  AdaptHeap<SLList, FailingHeap> heap;
  void* a = heap.malloc(32);
  void* b = heap.malloc(32);
  heap.free(a);
  heap.free(b);
  EXPECT_EQ(heap.malloc(32), b);
  EXPECT_EQ(heap.malloc(32), a);
  EXPECT_EQ(FaultControl::mallocs, 2u);
  heap.free(a);
  heap.free(b);
}

TEST(AdaptHeap, WithDLListReusesFifoAndRemoves) {
  FaultControl::reset();
  AdaptHeap<DLList, FailingHeap> heap;
  void* a = heap.malloc(32);
  void* b = heap.malloc(32);
  void* c = heap.malloc(32);
  heap.free(a);
  heap.free(b);
  heap.free(c);
  heap.remove(b);  // e.g. a coalescer took it
  EXPECT_EQ(heap.malloc(32), a);
  EXPECT_EQ(heap.malloc(32), c);
  EXPECT_TRUE(heap.empty());
  heap.free(a);
  heap.free(b);
  heap.free(c);
}

TEST(AdaptHeap, RoundsRequestsUpToTheDictionaryNode) {
  FaultControl::reset();
  AdaptHeap<DLList, FailingHeap> heap;
  void* p = heap.malloc(1);
  EXPECT_EQ(FaultControl::last_request, 16u);
  heap.free(p);
}

TEST(AdaptHeap, ReturnsNullWhenTheParentDoesOrIsEmpty) {
  FaultControl::reset();
  AdaptHeap<SLList, FailingHeap> failing;
  FaultControl::fail_from_now();
  errno = 0;
  EXPECT_EQ(failing.malloc(64), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  AdaptHeap<DLList, NullHeap> bin;
  EXPECT_EQ(bin.malloc(64), nullptr) << "an empty bin";
  failing.free(nullptr);
  EXPECT_TRUE(failing.empty());
}

TEST(AdaptHeap, DestructorReturnsTheDictionary) {
  FaultControl::reset();
  {
    AdaptHeap<DLList, FailingHeap> heap;
    std::vector<void*> v;
    for (int i = 0; i < 6; ++i) v.push_back(heap.malloc(24));
    for (void* p : v) heap.free(p);
  }
  EXPECT_EQ(FaultControl::live(), 0u);
}

namespace {
constexpr std::size_t pow2_class(std::size_t s) { return s <= 16 ? 0 : static_cast<std::size_t>(std::bit_width(s - 1) - 4); }
constexpr std::size_t pow2_size(std::size_t c) { return std::size_t{16} << c; }
}  // namespace

TEST(AdaptHeap, PassesTheModelTestAsBinsOfAStrictSegHeap) {
  FaultControl::reset();
  StrictSegHeap<9, pow2_class, pow2_size, SizeHeap<AdaptHeap<DLList, FailingHeap>>, SizeHeap<FailingHeap>> fifo;
  strata::test::run_heap_model(fifo, {.seed = 12, .operations = 50000});
  StrictSegHeap<9, pow2_class, pow2_size, SizeHeap<AdaptHeap<SLList, FailingHeap>>, SizeHeap<FailingHeap>> lifo;
  strata::test::run_heap_model(lifo, {.seed = 13, .operations = 50000});
}
