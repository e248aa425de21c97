#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;
using strata::test::FailingHeap;
using strata::test::FaultControl;

static_assert(SizedHeap<SizeHeap<FailingHeap>>);

TEST(SizeHeap, RecordsTheRequestedSizeInA16ByteHeader) {
  FaultControl::reset();
  SizeHeap<FailingHeap> heap;
  void* p = heap.malloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(FaultControl::last_request, 116u) << "asks its parent for the size plus the header";
  EXPECT_EQ(heap.getSize(p), 100u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
  EXPECT_EQ(*reinterpret_cast<std::size_t*>(static_cast<char*>(p) - 8), 100u) << "size sits just before the object";
  heap.free(p);
  EXPECT_EQ(FaultControl::last_freed, static_cast<char*>(p) - 16) << "gives the parent its own block back";
  EXPECT_EQ(FaultControl::live(), 0u);
}

TEST(SizeHeap, ZeroSizeObjectsHaveSizeZero) {
  FaultControl::reset();
  SizeHeap<FailingHeap> heap;
  void* p = heap.malloc(0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(heap.getSize(p), 0u);
  heap.free(p);
}

TEST(SizeHeap, PassesOutOfMemoryOnAsNull) {
  FaultControl::reset();
  SizeHeap<FailingHeap> heap;
  FaultControl::fail_from_now();
  errno = 0;
  EXPECT_EQ(heap.malloc(64), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(SizeHeap, RejectsSizesThatWouldOverflowTheHeader) {
  FaultControl::reset();
  SizeHeap<FailingHeap> heap;
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX - 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(FaultControl::mallocs, 0u) << "the parent was never asked for a wrapped-around size";
}

TEST(SizeHeap, FreeOfNullIsANoOp) {
  FaultControl::reset();
  SizeHeap<FailingHeap> heap;
  heap.free(nullptr);
  EXPECT_EQ(FaultControl::frees, 0u);
}

TEST(SizeHeap, PassesTheModelTestOverMalloc) {
  SizeHeap<MallocHeap> heap;
  strata::test::run_heap_model(heap, {.seed = 11, .operations = 50000});
}
