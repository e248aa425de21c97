#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sys/mman.h>

#include "strata/layers.hpp"
#include "strata/platform.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;

static_assert(SizedHeap<MmapHeap>);

TEST(MmapHeap, MapsZeroedPagesWithTheLengthInAHeader) {
  MmapHeap heap;
  const std::size_t page = strata::platform::page_size();
  auto* p = static_cast<unsigned char*>(heap.malloc(100));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % page, 16u) << "object follows a 16-byte header";
  EXPECT_EQ(heap.getSize(p), page - 16) << "usable: the rest of the page";
  for (std::size_t i = 0; i < heap.getSize(p); ++i) ASSERT_EQ(p[i], 0);
  heap.free(p);
}

TEST(MmapHeap, RoundsToWholePages) {
  MmapHeap heap;
  const std::size_t page = strata::platform::page_size();
  void* p = heap.malloc(page);  // page + header: two pages
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(heap.getSize(p), 2 * page - 16);
  std::memset(p, 1, page);
  heap.free(p);
}

TEST(MmapHeap, FreeUnmapsTheWholeMapping) {
  MmapHeap heap;
  const std::size_t page = strata::platform::page_size();
  char* p = static_cast<char*>(heap.malloc(3 * page));  // 4 pages with the header
  ASSERT_NE(p, nullptr);
  char* mapping = p - 16;
  unsigned char residency[4];
  ASSERT_EQ(::mincore(mapping, 4 * page, residency), 0) << "mapped while live";
  heap.free(p);
  errno = 0;
  EXPECT_EQ(::mincore(mapping, 4 * page, residency), -1);
  EXPECT_EQ(errno, ENOMEM) << "no page of the mapping is left";
}

TEST(MmapHeap, ImpossibleRequestsAreNullWithEnomem) {
  MmapHeap heap;
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX / 2), nullptr) << "the kernel refuses";
  EXPECT_EQ(errno, ENOMEM);
  heap.free(nullptr);
}

TEST(MmapHeap, PassesTheModelTest) {
  MmapHeap heap;
  strata::test::run_heap_model(heap, {.seed = 5, .operations = 5000, .max_live = 200});
}

TEST(NullHeap, NeverHasMemoryAndLeavesErrnoAlone) {
  NullHeap heap;
  errno = 0;
  EXPECT_EQ(heap.malloc(16), nullptr);
  EXPECT_EQ(heap.malloc(0), nullptr);
  EXPECT_EQ(errno, 0);
  int x = 0;
  heap.free(&x);  // not its memory: nothing happens
}
