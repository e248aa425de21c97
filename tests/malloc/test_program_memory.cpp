// Inside libstrata (src/malloc headers): two allocation patterns of real
// programs that glibc serves with less memory than libstrata did
// (docs/benchmarks-malloc.md, issue 34, eighth part).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "config.hpp"
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

}  // namespace
