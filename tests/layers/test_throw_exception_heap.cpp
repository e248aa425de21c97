#include <gtest/gtest.h>

#include <new>

#include "strata/layers.hpp"
#include "util_test_heaps.hpp"

using strata::layers::ThrowExceptionHeap;
using strata::test::FailingHeap;

namespace {

TEST(ThrowExceptionHeap, PassesMemoryThrough) {
  ThrowExceptionHeap<FailingHeap> heap;
  void* p = heap.malloc(64);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(heap.getSize(p), 64u);
  heap.free(p);
  EXPECT_EQ(heap.live(), 0u);
}

TEST(ThrowExceptionHeap, ThrowsBadAllocWhenTheParentFails) {
  ThrowExceptionHeap<FailingHeap> heap;
  heap.fail_after(0);
  EXPECT_THROW(heap.malloc(64), std::bad_alloc);
  heap.never_fail();
  void* p = nullptr;
  EXPECT_NO_THROW(p = heap.malloc(64));
  heap.free(p);
}

}  // namespace
