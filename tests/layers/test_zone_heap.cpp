#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "util_test_heaps.hpp"

using strata::layers::MallocHeap;
using strata::layers::ZoneHeap;
using strata::test::FailingHeap;

namespace {

constexpr std::size_t kChunk = 4096;
using Zone = ZoneHeap<kChunk, FailingHeap>;
static_assert(strata::layers::ClearableHeap<Zone>);
// The parent's size and realloc do not apply to zone objects: they are hidden.
static_assert(!strata::layers::SizedHeap<ZoneHeap<kChunk, MallocHeap>>);
static_assert(!strata::layers::ReallocatingHeap<ZoneHeap<kChunk, strata::layers::ANSIWrapper<MallocHeap>>>);

TEST(ZoneHeap, BumpsAlignedObjectsThroughChunks) {
  Zone heap;
  auto* a = static_cast<char*>(heap.malloc(10));
  auto* b = static_cast<char*>(heap.malloc(20));
  auto* c = static_cast<char*>(heap.malloc(0));
  auto* d = static_cast<char*>(heap.malloc(1));
  EXPECT_EQ(b, a + 16);
  EXPECT_EQ(c, b + 32);
  EXPECT_EQ(d, c + 16);  // malloc(0) is unique too
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
  EXPECT_EQ(heap.chunkCount(), 1u);
  for (int i = 0; i < 300; ++i) ASSERT_NE(heap.malloc(100), nullptr);
  EXPECT_GT(heap.chunkCount(), 1u);
  EXPECT_EQ(heap.chunkCount(), heap.live());
}

TEST(ZoneHeap, FreeIsANoOp) {
  Zone heap;
  void* a = heap.malloc(100);
  heap.free(a);
  heap.free(nullptr);
  EXPECT_EQ(heap.frees, 0u);
  EXPECT_NE(heap.malloc(100), a);  // not reused before clear
}

TEST(ZoneHeap, LargeRequestsGetTheirOwnChunkAndBumpingContinues) {
  Zone heap;
  auto* small = static_cast<char*>(heap.malloc(64));
  auto* big = static_cast<char*>(heap.malloc(3 * kChunk));
  ASSERT_NE(big, nullptr);
  std::memset(big, 7, 3 * kChunk);
  EXPECT_EQ(heap.chunkCount(), 2u);
  EXPECT_EQ(heap.malloc(64), small + 64);  // the current chunk keeps going
}

TEST(ZoneHeap, ClearGivesEveryChunkBack) {
  Zone heap;
  for (int i = 0; i < 100; ++i) ASSERT_NE(heap.malloc(500), nullptr);
  ASSERT_NE(heap.malloc(100000), nullptr);
  ASSERT_GT(heap.live(), 10u);
  heap.clear();
  EXPECT_EQ(heap.live(), 0u);
  EXPECT_EQ(heap.chunkCount(), 0u);
  ASSERT_NE(heap.malloc(10), nullptr);  // usable again
}

TEST(ZoneHeap, OutOfMemoryIsNull) {
  Zone heap;
  heap.fail_after(0);
  EXPECT_EQ(heap.malloc(10), nullptr);
  EXPECT_EQ(heap.malloc(kChunk * 10), nullptr);
  EXPECT_EQ(heap.malloc(SIZE_MAX - 10), nullptr);
  heap.never_fail();
  EXPECT_NE(heap.malloc(10), nullptr);
}

TEST(ZoneHeap, PassesTheModelTest) {
  ZoneHeap<65536, MallocHeap> heap;
  strata::test::run_heap_model(heap, {.seed = 61, .operations = 20000});
}

}  // namespace
