// The checked build (STRATA_MALLOC_CHECKED): misuse is reported with the
// address and aborts; correct use still works (the model test runs on it).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "strata/strata.h"
#include "support/heap_model.hpp"

namespace {

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

TEST(StrataCheckedDeathTest, DoubleFreeOfSmallObject) {
  void* p = strata_malloc(64);
  strata_free(p);
  EXPECT_DEATH(strata_free(p), "strata: double free of " + hex(p));
}

TEST(StrataCheckedDeathTest, DoubleFreeOfLargeObject) {
  void* keep = strata_malloc(30000);  // a live neighbour, so the freed chunk does not vanish
  void* p = strata_malloc(30000);
  void* keep2 = strata_malloc(30000);
  strata_free(p);
  EXPECT_DEATH(strata_free(p), "strata: .*" + hex(p));
  strata_free(keep);
  strata_free(keep2);
}

TEST(StrataCheckedDeathTest, DoubleFreeOfHugeObject) {
  void* p = strata_malloc(5 << 20);
  strata_free(p);
  EXPECT_DEATH(strata_free(p), "strata: .*" + hex(p));
}

TEST(StrataCheckedDeathTest, ForeignPointers) {
  static char global[64];
  int on_stack[4];
  void* from_libc = std::malloc(32);
  EXPECT_DEATH(strata_free(global + 16), "strata: free\\(\\): pointer was not allocated by strata: " + hex(global + 16));
  EXPECT_DEATH(strata_free(on_stack), "not allocated by strata: " + hex(on_stack));
  EXPECT_DEATH(strata_free(from_libc), "not allocated by strata: " + hex(from_libc));
  std::free(from_libc);
}

TEST(StrataCheckedDeathTest, PointerIntoTheMiddleOfAnObject) {
  auto* p = static_cast<char*>(strata_malloc(64));
  EXPECT_DEATH(strata_free(p + 16), "not the start of an object: " + hex(p + 16));
  strata_free(p);
}

TEST(StrataCheckedDeathTest, ReallocOfAFreedObject) {
  void* p = strata_malloc(100);
  strata_free(p);
  EXPECT_DEATH((void)strata_realloc(p, 200), "double free of " + hex(p));
}

TEST(StrataChecked, CorrectUseStillWorks) {
  struct Heap {
    void* malloc(std::size_t n) { return strata_malloc(n); }
    void free(void* p) { strata_free(p); }
    void* realloc(void* p, std::size_t n) { return strata_realloc(p, n); }
    std::size_t getSize(void* p) { return strata_usable_size(p); }
  } heap;
  strata::test::run_heap_model(heap, {.seed = 5, .operations = 30000, .max_size = 100000});
  void* a = strata_aligned_alloc(128, 50);
  strata_free(a);  // interior pointers of aligned objects are legitimate
}

}  // namespace
