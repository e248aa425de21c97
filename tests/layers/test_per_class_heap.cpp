#include <gtest/gtest.h>

#include <new>
#include <string>

#include "strata/layers.hpp"
#include "util_test_heaps.hpp"

using strata::layers::PerClassHeap;
using strata::test::FailingHeap;

namespace {

class Foo {
 public:
  Foo() = default;
  Foo(int a, std::string b) : a_(a), b_(std::move(b)) {}
  int a() const { return a_; }
  const std::string& b() const { return b_; }

 private:
  int a_ = 7;
  std::string b_ = "foo";
};

class Bar {
 public:
  double x = 1.5;
};

// The paper's §3.1 shape: a Foo whose objects come from a per-class heap.
class FasterFoo : public PerClassHeap<Foo, FailingHeap> {
 public:
  using PerClassHeap::PerClassHeap;
};
using FasterBar = PerClassHeap<Bar, FailingHeap>;

TEST(PerClassHeap, NewAndDeleteGoThroughTheClassHeap) {
  FailingHeap& heap = FasterFoo::getHeap();
  const std::size_t mallocs = heap.mallocs, frees = heap.frees;
  auto* foo = new FasterFoo(3, "three");
  EXPECT_EQ(foo->a(), 3);
  EXPECT_EQ(foo->b(), "three");
  EXPECT_EQ(heap.mallocs, mallocs + 1);
  delete foo;
  EXPECT_EQ(heap.frees, frees + 1);
}

TEST(PerClassHeap, ArraysGoThroughTheClassHeapToo) {
  FailingHeap& heap = FasterFoo::getHeap();
  const std::size_t mallocs = heap.mallocs, frees = heap.frees;
  auto* foos = new FasterFoo[5];
  for (int i = 0; i < 5; ++i) EXPECT_EQ(foos[i].a(), 7);
  EXPECT_EQ(heap.mallocs, mallocs + 1);
  delete[] foos;
  EXPECT_EQ(heap.frees, frees + 1);
}

TEST(PerClassHeap, EachClassHasItsOwnHeap) {
  EXPECT_NE(static_cast<void*>(&FasterFoo::getHeap()), static_cast<void*>(&FasterBar::getHeap()));
  FailingHeap& foo_heap = FasterFoo::getHeap();
  const std::size_t foo_mallocs = foo_heap.mallocs;
  auto* bar = new FasterBar;
  EXPECT_EQ(bar->x, 1.5);
  EXPECT_EQ(foo_heap.mallocs, foo_mallocs);
  delete bar;
}

TEST(PerClassHeap, OutOfMemoryThrowsBadAllocOrReturnsNullWhenNothrow) {
  FailingHeap& heap = FasterBar::getHeap();
  heap.fail_after(0);
  EXPECT_THROW((void)new FasterBar, std::bad_alloc);
  EXPECT_THROW((void)new FasterBar[3], std::bad_alloc);
  EXPECT_EQ(new (std::nothrow) FasterBar, nullptr);
  EXPECT_EQ(new (std::nothrow) FasterBar[3], nullptr);
  heap.never_fail();
  auto* bar = new (std::nothrow) FasterBar;
  ASSERT_NE(bar, nullptr);
  delete bar;
}

TEST(PerClassHeap, DeletingNullIsANoOp) {
  FailingHeap& heap = FasterFoo::getHeap();
  const std::size_t frees = heap.frees;
  FasterFoo* none = nullptr;
  delete none;
  EXPECT_EQ(heap.frees, frees);
}

}  // namespace
