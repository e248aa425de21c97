#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "util_test_heaps.hpp"

using strata::layers::ANSIWrapper;
using strata::layers::MallocHeap;
using strata::test::FailingHeap;

namespace {

using Wrapped = ANSIWrapper<FailingHeap>;

static_assert(strata::layers::SizedHeap<Wrapped>);
static_assert(strata::layers::ReallocatingHeap<Wrapped>);
static_assert(strata::layers::CallocatingHeap<Wrapped>);
static_assert(strata::layers::AligningHeap<Wrapped>);

bool aligned(void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

TEST(ANSIWrapper, MallocZeroReturnsUniqueFreeablePointers) {
  Wrapped heap;
  void* a = heap.malloc(0);
  void* b = heap.malloc(0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  heap.free(a);
  heap.free(b);
  EXPECT_EQ(heap.live(), 0u);
}

TEST(ANSIWrapper, FreeNullIsANoOp) {
  Wrapped heap;
  heap.free(nullptr);
  EXPECT_EQ(heap.frees, 0u);
}

TEST(ANSIWrapper, ParentFailureIsNullAndENOMEM) {
  Wrapped heap;
  heap.fail_after(0);
  errno = 0;
  EXPECT_EQ(heap.malloc(100), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.malloc(0), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.calloc(4, 4), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(ANSIWrapper, RequestAbovePtrdiffMaxFailsWithoutReachingParent) {
  Wrapped heap;
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.malloc(static_cast<std::size_t>(PTRDIFF_MAX) + 1), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(heap.failures, 0u);  // the parent never saw them
  EXPECT_EQ(heap.mallocs, 0u);
}

TEST(ANSIWrapper, CallocZeroesDirtyMemory) {
  Wrapped heap;  // FailingHeap hands out 0xEE-filled memory
  auto* p = static_cast<unsigned char*>(heap.calloc(37, 11));
  ASSERT_NE(p, nullptr);
  for (std::size_t i = 0; i < 37 * 11; ++i) ASSERT_EQ(p[i], 0) << "byte " << i;
  heap.free(p);
}

TEST(ANSIWrapper, CallocOverflowIsNullAndENOMEM) {
  Wrapped heap;
  errno = 0;
  EXPECT_EQ(heap.calloc(SIZE_MAX / 2 + 1, 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.calloc(3, SIZE_MAX / 3 + 1), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(heap.mallocs + heap.failures, 0u);  // rejected before the parent
}

TEST(ANSIWrapper, CallocZeroCountIsAUniquePointer) {
  Wrapped heap;
  void* p = heap.calloc(0, 8);
  ASSERT_NE(p, nullptr);
  heap.free(p);
}

TEST(ANSIWrapper, ReallocNullIsMalloc) {
  Wrapped heap;
  void* p = heap.realloc(nullptr, 40);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(heap.getSize(p), 40u);
  EXPECT_EQ(heap.mallocs, 1u);
  heap.free(p);
}

TEST(ANSIWrapper, ReallocGrowCopiesContentsAndFreesOld) {
  Wrapped heap;
  auto* p = static_cast<unsigned char*>(heap.malloc(24));
  ASSERT_NE(p, nullptr);
  const std::size_t old_usable = heap.getSize(p);
  for (std::size_t i = 0; i < old_usable; ++i) p[i] = static_cast<unsigned char>(i * 7);
  auto* q = static_cast<unsigned char*>(heap.realloc(p, 5000));
  ASSERT_NE(q, nullptr);
  EXPECT_GE(heap.getSize(q), 5000u);
  for (std::size_t i = 0; i < old_usable; ++i) ASSERT_EQ(q[i], static_cast<unsigned char>(i * 7)) << "byte " << i;
  EXPECT_EQ(heap.live(), 1u);  // the old block went back to the parent
  heap.free(q);
}

TEST(ANSIWrapper, ReallocShrinkAndZeroKeepThePointer) {
  Wrapped heap;
  auto* p = static_cast<char*>(heap.malloc(100));
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "hello", 6);
  EXPECT_EQ(heap.realloc(p, 10), p);
  EXPECT_EQ(heap.realloc(p, 0), p);
  EXPECT_STREQ(p, "hello");
  EXPECT_EQ(heap.mallocs, 1u);
  heap.free(p);
}

TEST(ANSIWrapper, FailedReallocLeavesOldObjectIntact) {
  Wrapped heap;
  auto* p = static_cast<char*>(heap.malloc(16));
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "keep me", 8);
  heap.fail_after(0);
  errno = 0;
  EXPECT_EQ(heap.realloc(p, 1 << 20), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.realloc(p, SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_STREQ(p, "keep me");
  EXPECT_EQ(heap.frees, 0u);
  heap.never_fail();
  heap.free(p);
  EXPECT_EQ(heap.live(), 0u);
}

TEST(ANSIWrapper, MemalignRejectsNonPowerOfTwoWithEINVAL) {
  Wrapped heap;
  for (std::size_t bad : {std::size_t{0}, std::size_t{3}, std::size_t{24}, std::size_t{48}, SIZE_MAX}) {
    errno = 0;
    EXPECT_EQ(heap.memalign(bad, 64), nullptr) << bad;
    EXPECT_EQ(errno, EINVAL) << bad;
    errno = 0;
    EXPECT_EQ(heap.aligned_alloc(bad, 64), nullptr) << bad;
    EXPECT_EQ(errno, EINVAL) << bad;
  }
  EXPECT_EQ(heap.mallocs, 0u);
}

TEST(ANSIWrapper, PosixMemalignReturnsErrorsAndLeavesErrnoAlone) {
  Wrapped heap;
  void* out = reinterpret_cast<void*>(0x1);
  errno = 1234;
  EXPECT_EQ(heap.posix_memalign(&out, 4, 64), EINVAL);  // power of two, not a multiple of sizeof(void*)
  EXPECT_EQ(heap.posix_memalign(&out, 24, 64), EINVAL);
  EXPECT_EQ(out, reinterpret_cast<void*>(0x1));  // untouched on failure
  heap.fail_after(0);
  EXPECT_EQ(heap.posix_memalign(&out, 64, 64), ENOMEM);
  EXPECT_EQ(errno, 1234);
  heap.never_fail();
  ASSERT_EQ(heap.posix_memalign(&out, 256, 64), 0);
  EXPECT_TRUE(aligned(out, 256));
  EXPECT_EQ(errno, 1234);
  heap.free(out);
  EXPECT_EQ(heap.live(), 0u);
}

TEST(ANSIWrapper, OveralignedObjectsWorkWithFreeGetSizeAndRealloc) {
  Wrapped heap;
  std::vector<void*> objects;
  for (std::size_t alignment = 8; alignment <= 8192; alignment *= 2) {
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{5000}}) {
      auto* p = static_cast<unsigned char*>(heap.memalign(alignment, size));
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(aligned(p, alignment)) << p << " alignment " << alignment;
      EXPECT_GE(heap.getSize(p), size);
      std::memset(p, 0x5A, heap.getSize(p));  // the whole usable size is ours (ASan checks)
      objects.push_back(p);
    }
  }
  // realloc of an over-aligned object keeps its contents.
  auto* p = static_cast<unsigned char*>(heap.memalign(4096, 64));
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 64; ++i) p[i] = static_cast<unsigned char>(i);
  auto* q = static_cast<unsigned char*>(heap.realloc(p, 100000));
  ASSERT_NE(q, nullptr);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(q[i], i);
  heap.free(q);
  for (void* o : objects) heap.free(o);
  EXPECT_EQ(heap.live(), 0u);  // every block, and the table's slots, went back
}

TEST(ANSIWrapper, OveralignedFailsCleanlyWhenTheTableCannotGrow) {
  Wrapped heap;
  heap.fail_after(1);  // the block succeeds, the table's first slots do not
  errno = 0;
  EXPECT_EQ(heap.memalign(64, 10), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(heap.live(), 0u);  // the block was given back
}

// A parent with its own memalign: ANSIWrapper must use it instead of the table.
struct AligningParent : FailingHeap {
  void* memalign(std::size_t alignment, std::size_t size) noexcept {
    ++memaligns;
    return std::aligned_alloc(alignment, strata::layers::align_up(size, alignment));
  }
  std::size_t memaligns = 0;
};

TEST(ANSIWrapper, UsesTheParentsMemalignWhenThereIsOne) {
  ANSIWrapper<AligningParent> heap;
  void* p = heap.memalign(128, 50);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 128));
  EXPECT_EQ(heap.memaligns, 1u);
  heap.free(p);  // plain free: the parent's memory is free()-able
  EXPECT_EQ(heap.frees, 1u);
}

TEST(ANSIWrapper, PassesTheModelTestWithRealloc) {
  ANSIWrapper<MallocHeap> heap;
  strata::test::run_heap_model(heap, {.seed = 11, .operations = 60000});
}

TEST(ANSIWrapper, PassesTheModelTestOverACountingParent) {
  Wrapped heap;
  strata::test::run_heap_model(heap, {.seed = 12, .operations = 30000, .max_size = 20000});
  EXPECT_EQ(heap.live(), 0u);
}

}  // namespace

namespace {

// A utility chain, read bottom-up: malloc's memory, profiled, checked, locked,
// with C semantics on top.
using CheckedMalloc = ANSIWrapper<                 // C semantics, realloc
    strata::layers::SpinLockedHeap<                // one lock around each call
        strata::layers::DebugHeap<                 // fill patterns, double/foreign free, guards
            strata::layers::ProfileHeap<           // requested vs held bytes
                MallocHeap>>>>;                    // memory from the C library

TEST(ANSIWrapper, AUtilityChainPassesTheModelTest) {
  CheckedMalloc heap;
  strata::test::run_heap_model(heap, {.seed = 13, .operations = 30000});
  const auto& stats = heap.stats();
  EXPECT_EQ(stats.live_objects, 1u);  // DebugHeap's record is the one object left
  EXPECT_GT(stats.peak_live_requested, 0u);
  EXPECT_GE(stats.peak_held, stats.peak_live_requested);
}

}  // namespace

namespace {

TEST(ANSIWrapper, OverKingsleyHeapPassesTheModelTestWithRealloc) {
  ANSIWrapper<strata::layers::KingsleyHeap> heap;  // realloc grows within a power-of-two class in place
  strata::test::run_heap_model(heap, {.seed = 14, .operations = 40000});
}

}  // namespace
