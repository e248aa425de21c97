#include <gtest/gtest.h>

#include <cstdint>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using strata::layers::MallocHeap;

static_assert(strata::layers::SizedHeap<MallocHeap>);

TEST(MallocHeap, AllocatesAlignedUsableMemory) {
  MallocHeap heap;
  void* p = heap.malloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
  EXPECT_GE(heap.getSize(p), 100u);
  heap.free(p);
}

TEST(MallocHeap, ReportsOutOfMemoryAsNull) {
  MallocHeap heap;
  EXPECT_EQ(heap.malloc(SIZE_MAX / 2), nullptr);
}

TEST(MallocHeap, PassesTheModelTest) {
  MallocHeap heap;
  strata::test::run_heap_model(heap, {.seed = 7, .operations = 50000});
}
