// Inside libstrata (src/malloc headers): two allocation patterns of real
// programs that glibc serves with less memory than libstrata did
// (docs/benchmarks-malloc.md, issue 34, eighth part).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "config.hpp"
#include "huge_heap.hpp"
#include "os.hpp"
#include "size_classes.hpp"
#include "strata/strata.h"

namespace {

namespace cfg = strata::malloc_config;
namespace md = strata::malloc_detail;

// A power of two plus a small header (SQLite's in-memory journal allocates
// its 1 KiB chunks as 1032 bytes) fits a slot barely bigger, one object fewer
// a page block than the power of two, not the evenly spaced class 12.5% up.
TEST(StrataProgramMemory, APowerOfTwoPlusAHeaderFitsASnugSlot) {
  struct Case {
    std::size_t request, slot_at_most;
  };
  for (Case c : {Case{520, 528}, Case{1032, 1040}, Case{1040, 1040}, Case{2056, 2112}, Case{2112, 2112}}) {
    std::vector<void*> objects;
    for (int i = 0; i < 100; ++i) objects.push_back(strata_malloc(c.request));
    for (void* p : objects) {
      ASSERT_NE(p, nullptr);
      std::memset(p, 0x6b, c.request);
      EXPECT_GE(strata_usable_size(p), c.request);
      EXPECT_LE(strata_usable_size(p), c.slot_at_most + cfg::kCanaryBytes) << c.request;
    }
    for (void* p : objects) strata_free(p);
  }
  // Such a class packs its page blocks as tightly as the power of two does, but one object.
  for (std::size_t base : {1024, 2048}) {
    std::size_t slot = md::kClassSize[md::class_of(base + 8)];
    EXPECT_EQ(cfg::kPageSize / slot, cfg::kPageSize / base - 1) << base;
  }
}

// glibc maps every chunk of its mmap threshold or more and unmaps it when it
// is freed; its first free of a size raises the threshold above it. A huge
// object allocated at or above the threshold as it stood then has its pages
// discarded when freed, even when another object of its size was freed
// first: a program that grows a buffer (1.25, 2.5, then two 5 MiB copies, as
// CPython reading a file) and frees it keeps none of it, as with glibc.
// In a fresh process (the threshold is process-wide).
int big_objects_allocated_above_the_threshold_go_back(std::size_t size) {
  auto* a = static_cast<unsigned char*>(strata_malloc(size));
  auto* b = static_cast<unsigned char*>(strata_malloc(size));
  if (!a || !b) return 1;
  std::memset(a, 0x5a, size);
  std::memset(b, 0x5a, size);
  std::size_t discarded = md::discarded_os_pages();
  strata_free(a);  // the first free of its size: erased, and the threshold rises above it
  strata_free(b);  // allocated below the old threshold: erased too
  std::size_t pages = size / cfg::kOsPageSize;
  if (md::discarded_os_pages() < discarded + 2 * (pages - 1)) return 2;
  // An object allocated now is below glibc's risen threshold: glibc would
  // keep it in its heap, and so its pages stay for the next one.
  auto* c = static_cast<unsigned char*>(strata_malloc(size));
  std::memset(c, 0x5a, size);
  discarded = md::discarded_os_pages();
  strata_free(c);
  if (md::discarded_os_pages() != discarded) return 4;
  return 0;
}

TEST(StrataProgramMemoryDeathTest, HugeObjectsAllocatedAboveGlibcsThresholdAreErasedOnFree) {
  static_assert(cfg::kEraseFrom < (std::size_t{5} << 20) && (std::size_t{5} << 20) < cfg::kEraseUpTo);
  static_assert((std::size_t{5} << 20) > cfg::kLargeMax && (std::size_t{5} << 20) <= cfg::kHugeRegionObjectMax);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(big_objects_allocated_above_the_threshold_go_back(std::size_t{5} << 20)),
              testing::ExitedWithCode(0), "");
}

}  // namespace
