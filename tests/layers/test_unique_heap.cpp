#include <gtest/gtest.h>

#include "strata/layers.hpp"
#include "util_test_heaps.hpp"

using strata::layers::UniqueHeap;
using strata::test::FailingHeap;

namespace {

struct OtherTag {};

TEST(UniqueHeap, AllHandlesOfOneTypeShareOneHeap) {
  UniqueHeap<FailingHeap> first;
  UniqueHeap<FailingHeap> second;
  FailingHeap& shared = UniqueHeap<FailingHeap>::instance();
  const std::size_t mallocs = shared.mallocs, frees = shared.frees;
  void* p = first.malloc(40);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(second.getSize(p), 40u);
  second.free(p);  // freed through another handle: same heap
  EXPECT_EQ(shared.mallocs, mallocs + 1);
  EXPECT_EQ(shared.frees, frees + 1);
}

TEST(UniqueHeap, ADifferentTagIsADifferentHeap) {
  EXPECT_NE(&UniqueHeap<FailingHeap>::instance(), &(UniqueHeap<FailingHeap, OtherTag>::instance()));
}

TEST(UniqueHeap, ReturnsNullWhenTheSharedHeapFails) {
  UniqueHeap<FailingHeap, OtherTag> handle;
  handle.instance().fail_after(0);
  EXPECT_EQ(handle.malloc(8), nullptr);
  handle.instance().never_fail();
}

}  // namespace
