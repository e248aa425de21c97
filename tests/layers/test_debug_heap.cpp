#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "util_test_heaps.hpp"

// The death tests hand DebugHeap deliberately bad pointers; it aborts before any
// reaches free(), but gcc's inliner sees the path and warns at -O2.
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"

using strata::layers::DebugHeap;
using strata::layers::MallocHeap;
using strata::test::FailingHeap;
using strata::test::HoardingHeap;

namespace {

static_assert(strata::layers::SizedHeap<DebugHeap<MallocHeap>>);
// realloc/calloc/memalign of the parent would bypass the record: hidden.
static_assert(!strata::layers::ReallocatingHeap<DebugHeap<strata::layers::ANSIWrapper<MallocHeap>>>);
static_assert(!strata::layers::CallocatingHeap<DebugHeap<strata::layers::ANSIWrapper<MallocHeap>>>);
static_assert(!strata::layers::AligningHeap<DebugHeap<strata::layers::ANSIWrapper<MallocHeap>>>);

// The regex a death message must match: the diagnosis, then the exact address.
std::string message_for(const char* what, const void* ptr) {
  char address[32];
  std::snprintf(address, sizeof address, "%p", ptr);
  return std::string("strata DebugHeap: ") + what + " " + address;
}

TEST(DebugHeap, FillsNewObjectsWithTheAllocPattern) {
  DebugHeap<FailingHeap> heap;  // the parent hands out 0xEE
  auto* p = static_cast<unsigned char*>(heap.malloc(100));
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(p[i], DebugHeap<FailingHeap>::kAllocFill) << i;
  heap.free(p);
}

TEST(DebugHeap, FillsFreedObjectsWithTheFreePattern) {
  DebugHeap<HoardingHeap> heap;  // keeps freed blocks mapped, so reading them is defined
  auto* p = static_cast<unsigned char*>(heap.malloc(64));
  ASSERT_NE(p, nullptr);
  std::memset(p, 0x11, 64);
  heap.free(p);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(p[i], DebugHeap<HoardingHeap>::kFreeFill) << i;
}

TEST(DebugHeap, GetSizeIsTheRequestedSize) {
  DebugHeap<MallocHeap> heap;
  void* p = heap.malloc(13);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(heap.getSize(p), 13u);
  EXPECT_TRUE(heap.isLive(p));
  heap.free(p);
  EXPECT_FALSE(heap.isLive(p));
}

TEST(DebugHeap, PutsGuardBytesAfterEachObject) {
  DebugHeap<FailingHeap> heap;
  auto* p = static_cast<unsigned char*>(heap.malloc(20));
  ASSERT_NE(p, nullptr);
  for (std::size_t i = 0; i < DebugHeap<FailingHeap>::kGuardBytes; ++i)
    EXPECT_EQ(p[20 + i], DebugHeap<FailingHeap>::kGuardFill) << i;
  heap.free(p);
  EXPECT_EQ(heap.live(), 1u);  // the object went back; only the record's slots remain
}

TEST(DebugHeapDeathTest, OverrunAbortsNamingTheAddressAtFree) {
  DebugHeap<MallocHeap> heap;
  auto* p = static_cast<char*>(heap.malloc(20));
  ASSERT_NE(p, nullptr);
  p[20] = 'x';  // one past the end: inside the guard, so ASan allows it
  EXPECT_DEATH(heap.free(p), message_for("overrun past the end of", p));
  p[20] = static_cast<char>(DebugHeap<MallocHeap>::kGuardFill);
  heap.free(p);
}

TEST(DebugHeapDeathTest, GetSizeOfAFreedObjectAbortsNamingTheAddress) {
  DebugHeap<MallocHeap> heap;
  void* p = heap.malloc(24);
  heap.free(p);
  EXPECT_DEATH((void)heap.getSize(p), message_for("getSize of freed object", p));
}

TEST(DebugHeap, FreeNullIsANoOp) {
  DebugHeap<FailingHeap> heap;
  heap.free(nullptr);
  EXPECT_EQ(heap.frees, 0u);
}

TEST(DebugHeap, AnAddressHandedOutAgainIsLiveAgain) {
  DebugHeap<HoardingHeap> heap;  // LIFO reuse: the same block comes back
  void* a = heap.malloc(32);
  heap.free(a);
  void* b = heap.malloc(32);
  ASSERT_EQ(a, b);
  heap.free(b);  // not a double free: it was allocated again
  EXPECT_FALSE(heap.isLive(b));
}

TEST(DebugHeap, ReturnsNullWhenTheParentFails) {
  DebugHeap<FailingHeap> heap;
  heap.fail_after(0);
  EXPECT_EQ(heap.malloc(10), nullptr);
}

TEST(DebugHeap, ReturnsNullAndGivesTheObjectBackWhenTheRecordCannotGrow) {
  DebugHeap<FailingHeap> heap;
  heap.fail_after(1);  // the object succeeds, the record's slots fail
  EXPECT_EQ(heap.malloc(10), nullptr);
  EXPECT_EQ(heap.live(), 0u);
}

TEST(DebugHeapDeathTest, DoubleFreeAbortsNamingTheAddress) {
  DebugHeap<MallocHeap> heap;
  void* p = heap.malloc(24);
  ASSERT_NE(p, nullptr);
  heap.free(p);
  EXPECT_DEATH(heap.free(p), message_for("double free of", p));
}

TEST(DebugHeapDeathTest, ForeignPointerAbortsNamingTheAddress) {
  DebugHeap<MallocHeap> heap;
  void* mine = heap.malloc(24);  // the record exists, the pointer is simply not in it
  int on_the_stack = 0;
  EXPECT_DEATH(heap.free(&on_the_stack), message_for("free of foreign pointer", &on_the_stack));
  heap.free(mine);
}

TEST(DebugHeapDeathTest, ForeignPointerIsCaughtBeforeAnyAllocation) {
  DebugHeap<MallocHeap> heap;
  static char elsewhere[16];
  EXPECT_DEATH(heap.free(elsewhere), message_for("free of foreign pointer", elsewhere));
}

TEST(DebugHeapDeathTest, InteriorPointerIsForeign) {
  DebugHeap<MallocHeap> heap;
  auto* p = static_cast<char*>(heap.malloc(64));
  EXPECT_DEATH(heap.free(p + 16), message_for("free of foreign pointer", p + 16));
  heap.free(p);
}

TEST(DebugHeap, PassesTheModelTest) {
  DebugHeap<MallocHeap> heap;
  strata::test::run_heap_model(heap, {.seed = 21, .operations = 40000});
}

}  // namespace
