#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "strata/layers.hpp"

using namespace strata::layers;

static_assert(Heap<SbrkHeap<>>);

// Each test uses its own reservation size, i.e. its own process-wide break.
TEST(SbrkHeap, BumpsConsecutiveAlignedBlocks) {
  SbrkHeap<std::size_t{4} << 20> heap;
  char* a = static_cast<char*>(heap.malloc(1));
  char* b = static_cast<char*>(heap.malloc(100));
  char* c = static_cast<char*>(heap.malloc(0));
  char* d = static_cast<char*>(heap.malloc(16));
  ASSERT_TRUE(a && b && c && d);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
  EXPECT_EQ(b - a, 16);
  EXPECT_EQ(c - b, 112);
  EXPECT_EQ(d - c, 16) << "a zero-size request still gets a distinct block";
  std::memset(b, 0xAB, 100);
  heap.free(b);  // a no-op: the break does not move back
  EXPECT_EQ(static_cast<char*>(heap.malloc(16)) - d, 16);
}

TEST(SbrkHeap, AllInstancesShareOneBreak) {
  SbrkHeap<std::size_t{8} << 20> first;
  SbrkHeap<std::size_t{8} << 20> second;
  char* a = static_cast<char*>(first.malloc(48));
  char* b = static_cast<char*>(second.malloc(48));
  EXPECT_EQ(b - a, 48);
  EXPECT_EQ(SbrkHeap<std::size_t{8} << 20>::bytes_used(), 96u);
}

TEST(SbrkHeap, CommitsMemoryAsItIsUsed) {
  SbrkHeap<std::size_t{2} << 20> heap;
  // Write every byte of blocks that cross several commit steps.
  for (int i = 0; i < 5; ++i) {
    auto* p = static_cast<unsigned char*>(heap.malloc(100000));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p[0], 0) << "fresh memory reads as zero";
    std::memset(p, i, 100000);
  }
}

TEST(SbrkHeap, ExhaustedReservationIsNullWithEnomem) {
  constexpr std::size_t kReserve = std::size_t{1} << 20;
  SbrkHeap<kReserve> heap;
  errno = 0;
  EXPECT_EQ(heap.malloc(kReserve + 1), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  std::size_t blocks = 0;
  while (heap.malloc(64 * 1024) != nullptr) ++blocks;
  EXPECT_EQ(blocks, 16u) << "exactly the reservation was handed out";
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.malloc(1), nullptr) << "nothing left, not even a small block";
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(heap.malloc(SIZE_MAX), nullptr);
}
