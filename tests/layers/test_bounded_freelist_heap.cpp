#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;
using strata::test::FailingHeap;
using strata::test::FaultControl;

static_assert(Heap<BoundedFreelistHeap<4, FailingHeap>>);

TEST(BoundedFreelistHeap, CachesAtMostTheBoundAndPassesTheRestOn) {
  FaultControl::reset();
  BoundedFreelistHeap<3, FailingHeap> heap;
  std::vector<void*> objects;
  for (int i = 0; i < 5; ++i) objects.push_back(heap.malloc(32));
  for (void* p : objects) heap.free(p);
  EXPECT_EQ(heap.cached(), 3u);
  EXPECT_EQ(FaultControl::frees, 2u) << "the 4th and 5th frees went to the parent";
  EXPECT_EQ(FaultControl::last_freed, objects[4]);
  // LIFO among the cached three.
  EXPECT_EQ(heap.malloc(32), objects[2]);
  EXPECT_EQ(heap.malloc(32), objects[1]);
  EXPECT_EQ(heap.malloc(32), objects[0]);
  EXPECT_EQ(heap.cached(), 0u);
  for (int i = 0; i < 3; ++i) heap.free(objects[i]);
}

TEST(BoundedFreelistHeap, ZeroBoundCachesNothing) {
  FaultControl::reset();
  BoundedFreelistHeap<0, FailingHeap> heap;
  void* p = heap.malloc(16);
  heap.free(p);
  EXPECT_EQ(FaultControl::live(), 0u);
}

TEST(BoundedFreelistHeap, ReturnsNullWhenTheParentDoes) {
  FaultControl::reset();
  BoundedFreelistHeap<2, FailingHeap> heap;
  FaultControl::fail_from_now();
  errno = 0;
  EXPECT_EQ(heap.malloc(16), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  heap.free(nullptr);
  EXPECT_EQ(heap.cached(), 0u);
}

TEST(BoundedFreelistHeap, DestructorReturnsTheCache) {
  FaultControl::reset();
  {
    BoundedFreelistHeap<8, FailingHeap> heap;
    for (int i = 0; i < 4; ++i) heap.free(heap.malloc(64));
    void* ps[4];
    for (auto& p : ps) p = heap.malloc(64);
    for (auto* p : ps) heap.free(p);
  }
  EXPECT_EQ(FaultControl::live(), 0u);
}

namespace {
constexpr std::size_t pow2_class(std::size_t s) { return s <= 16 ? 0 : static_cast<std::size_t>(std::bit_width(s - 1) - 4); }
constexpr std::size_t pow2_size(std::size_t c) { return std::size_t{16} << c; }
}  // namespace

TEST(BoundedFreelistHeap, PassesTheModelTestUnderAStrictSegHeap) {
  FaultControl::reset();
  StrictSegHeap<9, pow2_class, pow2_size, SizeHeap<BoundedFreelistHeap<16, FailingHeap>>, SizeHeap<FailingHeap>> heap;
  strata::test::run_heap_model(heap, {.seed = 8, .operations = 50000});
}
