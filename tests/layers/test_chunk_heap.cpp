#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;
using strata::test::FailingHeap;
using strata::test::FaultControl;

static_assert(Heap<ChunkHeap<4096, FailingHeap>>);

TEST(ChunkHeap, CarvesConsecutiveObjectsFromOneChunk) {
  FaultControl::reset();
  ChunkHeap<4096, FailingHeap> heap;
  char* a = static_cast<char*>(heap.malloc(48));
  char* b = static_cast<char*>(heap.malloc(48));
  char* c = static_cast<char*>(heap.malloc(40));  // rounded to 48
  char* d = static_cast<char*>(heap.malloc(1));
  ASSERT_TRUE(a && b && c && d);
  EXPECT_EQ(FaultControl::mallocs, 1u) << "one chunk so far";
  EXPECT_EQ(FaultControl::last_request, 4096u);
  EXPECT_EQ(b - a, 48);
  EXPECT_EQ(c - b, 48);
  EXPECT_EQ(d - c, 48);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
}

TEST(ChunkHeap, FetchesANewChunkWhenTheCurrentOneIsFull) {
  FaultControl::reset();
  ChunkHeap<1024, FailingHeap> heap;
  // 1024-byte chunks hold a 16-byte link and 63 objects of 16 bytes.
  for (int i = 0; i < 63; ++i) ASSERT_NE(heap.malloc(16), nullptr);
  EXPECT_EQ(FaultControl::mallocs, 1u);
  ASSERT_NE(heap.malloc(16), nullptr);
  EXPECT_EQ(FaultControl::mallocs, 2u);
}

TEST(ChunkHeap, GivesOversizedRequestsAChunkOfTheirOwn) {
  FaultControl::reset();
  ChunkHeap<1024, FailingHeap> heap;
  auto* p = static_cast<char*>(heap.malloc(3000));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(FaultControl::last_request, 3072u) << "3000 + link, rounded up to whole chunks";
  std::memset(p, 7, 3000);
}

TEST(ChunkHeap, FreeIsANoOpAndClearReturnsEveryChunk) {
  FaultControl::reset();
  {
    ChunkHeap<1024, FailingHeap> heap;
    void* p = heap.malloc(100);
    heap.free(p);
    EXPECT_EQ(FaultControl::frees, 0u);
    EXPECT_NE(heap.malloc(100), p) << "objects are not recycled by ChunkHeap itself";
    for (int i = 0; i < 50; ++i) heap.malloc(100);
    EXPECT_GT(FaultControl::live(), 1u);
    heap.clear();
    EXPECT_EQ(FaultControl::live(), 0u);
    heap.malloc(10);
  }
  EXPECT_EQ(FaultControl::live(), 0u) << "the destructor returned the last chunk";
}

TEST(ChunkHeap, ReturnsNullWhenTheParentDoes) {
  FaultControl::reset();
  ChunkHeap<1024, FailingHeap> heap;
  ASSERT_NE(heap.malloc(500), nullptr);
  FaultControl::fail_from_now();
  EXPECT_NE(heap.malloc(400), nullptr) << "still fits in the current chunk";
  errno = 0;
  EXPECT_EQ(heap.malloc(400), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(heap.malloc(SIZE_MAX - 10), nullptr);
}

namespace {
constexpr std::size_t pow2_class(std::size_t s) { return s <= 16 ? 0 : static_cast<std::size_t>(std::bit_width(s - 1) - 4); }
constexpr std::size_t pow2_size(std::size_t c) { return std::size_t{16} << c; }
}  // namespace

TEST(ChunkHeap, PassesTheModelTestUnderFreelistsOfOneSize) {
  FaultControl::reset();
  // Each bin: a free list recycling objects carved from that bin's own chunks.
  StrictSegHeap<9, pow2_class, pow2_size, SizeHeap<FreelistHeap<ChunkHeap<16384, FailingHeap>>>,
                SizeHeap<FailingHeap>>
      heap;
  strata::test::run_heap_model(heap, {.seed = 9, .operations = 50000});
}
