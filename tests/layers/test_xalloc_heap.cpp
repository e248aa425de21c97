#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "util_test_heaps.hpp"

using strata::layers::MallocHeap;
using strata::layers::XallocHeap;
using strata::test::FailingHeap;

namespace {

constexpr std::size_t kRegion = 64 * 1024;
using Xalloc = XallocHeap<kRegion, FailingHeap>;
static_assert(strata::layers::SizedHeap<Xalloc>);
static_assert(!strata::layers::ReallocatingHeap<XallocHeap<kRegion, strata::layers::ANSIWrapper<MallocHeap>>>);

std::string address_of(const void* p) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%p", p);
  return buffer;
}

TEST(XallocHeap, BumpsAfterTheLastBlock) {
  Xalloc heap;
  auto* a = static_cast<char*>(heap.malloc(10));
  auto* b = static_cast<char*>(heap.malloc(40));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b, a + 16 + 16);  // a's 16 usable bytes, then b's header
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
  EXPECT_EQ(heap.getSize(a), 16u);
  EXPECT_EQ(heap.getSize(b), 48u);
  EXPECT_EQ(heap.mallocs, 1u);  // one region
}

TEST(XallocHeap, FreeingTheLastBlockMovesThePointerBack) {
  Xalloc heap;
  void* a = heap.malloc(100);
  void* b = heap.malloc(100);
  const std::size_t in_use = heap.bytesInUse();
  heap.free(b);
  EXPECT_LT(heap.bytesInUse(), in_use);
  EXPECT_EQ(heap.malloc(100), b);
  (void)a;
}

TEST(XallocHeap, FreeingAnInnerBlockWaitsUntilTheBlocksAfterItGo) {
  Xalloc heap;
  void* a = heap.malloc(32);
  void* b = heap.malloc(32);
  void* c = heap.malloc(32);
  void* d = heap.malloc(32);
  heap.free(b);
  heap.free(c);  // b and c free, but d still pins them
  const std::size_t pinned = heap.bytesInUse();
  EXPECT_EQ(pinned, 4u * 48);
  heap.free(d);  // retreats past d, c and b
  EXPECT_EQ(heap.bytesInUse(), 48u);
  EXPECT_EQ(heap.malloc(32), b);
  heap.free(a);
  (void)a;
}

TEST(XallocHeap, FreeingEverythingEmptiesTheRegion) {
  Xalloc heap;
  void* blocks[10];
  for (auto& p : blocks) p = heap.malloc(200);
  for (void* p : blocks) heap.free(p);  // oldest first: only the last free retreats
  EXPECT_EQ(heap.bytesInUse(), 0u);
  EXPECT_EQ(heap.malloc(200), blocks[0]);
}

TEST(XallocHeap, AFullRegionReturnsNullAndRecovers) {
  Xalloc heap;
  void* big = heap.malloc(kRegion - 64);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(heap.malloc(64), nullptr);  // 64 + header does not fit
  EXPECT_EQ(heap.malloc(kRegion * 2), nullptr);
  EXPECT_EQ(heap.malloc(SIZE_MAX), nullptr);
  heap.free(big);
  EXPECT_NE(heap.malloc(64), nullptr);
}

TEST(XallocHeap, ClearResetsThePointerAndKeepsTheRegion) {
  Xalloc heap;
  void* a = heap.malloc(50);
  heap.malloc(500);
  heap.clear();
  EXPECT_EQ(heap.bytesInUse(), 0u);
  EXPECT_EQ(heap.malloc(50), a);
  EXPECT_EQ(heap.mallocs, 1u);
}

TEST(XallocHeap, ParentFailureIsNull) {
  Xalloc heap;
  heap.fail_after(0);
  EXPECT_EQ(heap.malloc(10), nullptr);
  heap.never_fail();
  EXPECT_NE(heap.malloc(10), nullptr);
}

TEST(XallocHeapDeathTest, DoubleFreeAbortsNamingTheAddress) {
  Xalloc heap;
  void* a = heap.malloc(10);
  void* b = heap.malloc(10);
  heap.free(a);
  EXPECT_DEATH(heap.free(a), "strata XallocHeap: double free of " + address_of(a));
  heap.free(b);
}

TEST(XallocHeapDeathTest, ForeignPointerAbortsNamingTheAddress) {
  Xalloc heap;
  void* a = heap.malloc(10);
  // Aligned and with room before it, so only the range check can reject it.
  alignas(16) static char buffer[64];
  char* elsewhere = buffer + 32;
  EXPECT_DEATH(heap.free(elsewhere), "strata XallocHeap: free of pointer outside this heap's blocks " +
                                         address_of(elsewhere));
  heap.free(a);
}

TEST(XallocHeap, PassesTheModelTest) {
  XallocHeap<32 << 20, MallocHeap> heap;
  strata::test::run_heap_model(heap, {.seed = 71, .operations = 20000});
}

}  // namespace

namespace {

TEST(XallocHeap, OverMmapHeapAsInThePaperPassesTheModelTest) {
  XallocHeap<16 << 20, strata::layers::MmapHeap> heap;  // 197.parser's configuration, smaller region
  strata::test::run_heap_model(heap, {.seed = 72, .operations = 10000});
}

}  // namespace
