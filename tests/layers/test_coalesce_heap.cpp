// CoalesceableHeap and CoalesceHeap, tested together over a contiguous arena so
// that the chunks can be walked and every boundary tag checked.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;
using strata::test::ArenaHeap;
using strata::test::FailingHeap;
using strata::test::FaultControl;

namespace {

constexpr std::size_t kArena = std::size_t{8} << 20;
using Tags = CoalesceableHeap<ArenaHeap<kArena>>;
using Bins = SegHeap<lea::kNumBins, lea::size_class, lea::class_size, AdaptHeap<DLList, NullHeap>, Tags>;
using Coalescing = CoalesceHeap<Bins>;

static_assert(SizedHeap<Coalescing>);
static_assert(CoalesceableRepresentation<Bins>);

struct ChunkInfo {
  char* object;
  std::size_t size;
  bool free;
};

// Walks every chunk of the arena, checking the boundary tags as it goes.
std::vector<ChunkInfo> walk(Coalescing& heap) {
  std::vector<ChunkInfo> chunks;
  char* const base = heap.arena_base();
  char* const end = base + heap.arena_used();
  auto* header = reinterpret_cast<ChunkHeader*>(base);
  EXPECT_TRUE(header->has(ChunkHeader::kBlockStart));
  EXPECT_FALSE(header->has(ChunkHeader::kPrevFree));
  std::size_t prev_size = 0;
  bool prev_free = false;
  while (!header->has(ChunkHeader::kFence)) {
    if (!chunks.empty()) {
      EXPECT_EQ(header->prev_size, prev_size) << "stale prev_size";
    }
    EXPECT_EQ(header->has(ChunkHeader::kPrevFree), prev_free);
    const std::size_t size = header->size();
    EXPECT_EQ(size % 16, 0u);
    EXPECT_GE(size, 16u);
    ChunkHeader* next = header->next();
    const bool is_free = next->has(ChunkHeader::kPrevFree);
    EXPECT_FALSE(is_free && prev_free) << "two adjacent free chunks";
    chunks.push_back({static_cast<char*>(header->object()), size, is_free});
    if (::testing::Test::HasFailure()) break;
    prev_size = size;
    prev_free = is_free;
    header = next;
  }
  EXPECT_EQ(reinterpret_cast<char*>(header + 1), end) << "one island: the fence ends the arena";
  return chunks;
}

}  // namespace

TEST(CoalesceableHeap, FramesEachChunkWithAHeaderAndAFence) {
  FaultControl::reset();
  CoalesceableHeap<FailingHeap> heap;
  void* p = heap.malloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(FaultControl::last_request, 112u + 32u) << "chunk + header + fence";
  EXPECT_EQ(heap.getSize(p), 112u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
  EXPECT_FALSE(heap.isFree(p));
  EXPECT_FALSE(heap.isPrevFree(p));
  EXPECT_TRUE(heap.isFence(heap.getNext(p)));
  heap.markFree(p);
  EXPECT_TRUE(heap.isFree(p));
  heap.markInUse(p);
  heap.free(p);
  EXPECT_EQ(FaultControl::live(), 0u) << "a whole, untouched block goes back to Super";
}

TEST(CoalesceableHeap, JoinsConsecutiveBlocksIntoNeighbours) {
  FaultControl::reset();
  CoalesceableHeap<ArenaHeap<4096>> heap;
  char* a = static_cast<char*>(heap.malloc(32));
  char* b = static_cast<char*>(heap.malloc(32));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(heap.getSize(a), 32u);
  EXPECT_EQ(heap.getSize(b), 48u) << "the old fence became b's header; b gains its 16 bytes";
  EXPECT_EQ(heap.getNext(a), b);
  EXPECT_EQ(heap.getPrev(b), a);
  EXPECT_FALSE(heap.isFence(b));
  EXPECT_TRUE(heap.isFence(heap.getNext(b)));
}

TEST(CoalesceableHeap, KeepsNonConsecutiveBlocksApart) {
  FaultControl::reset();
  CoalesceableHeap<FailingHeap> heap;
  void* a = heap.malloc(32);
  void* b = heap.malloc(32);
  EXPECT_EQ(heap.getSize(b), 32u);
  EXPECT_TRUE(heap.isFence(heap.getNext(a)));
  heap.free(a);
  heap.free(b);
}

TEST(CoalesceableHeap, ReturnsNullWhenTheParentDoes) {
  FaultControl::reset();
  CoalesceableHeap<FailingHeap> heap;
  FaultControl::fail_from_now();
  errno = 0;
  EXPECT_EQ(heap.malloc(10), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(heap.malloc(SIZE_MAX - 20), nullptr);
}

TEST(CoalesceHeap, MergesAFreedChunkWithBothFreeNeighbours) {
  FaultControl::reset();
  Coalescing heap;
  char* a = static_cast<char*>(heap.malloc(100));
  char* b = static_cast<char*>(heap.malloc(100));
  char* c = static_cast<char*>(heap.malloc(100));
  char* d = static_cast<char*>(heap.malloc(100));  // keeps c from touching the fence
  ASSERT_TRUE(a && b && c && d);
  const std::size_t total = heap.getSize(a) + heap.getSize(b) + heap.getSize(c) + 2 * 16;
  heap.free(a);
  heap.free(c);
  EXPECT_EQ(walk(heap).size(), 4u) << "not adjacent yet: no merge";
  heap.free(b);
  auto chunks = walk(heap);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].object, a);
  EXPECT_EQ(chunks[0].size, total);
  EXPECT_TRUE(chunks[0].free);
  const std::size_t used = heap.arena_used();
  EXPECT_EQ(heap.malloc(total), a) << "the merged chunk serves a request of its whole size";
  EXPECT_EQ(heap.arena_used(), used);
  heap.free(a);
  heap.free(d);
  chunks = walk(heap);
  ASSERT_EQ(chunks.size(), 1u) << "everything merged back";
}

TEST(CoalesceHeap, SplitsABigFreeChunkForASmallRequest) {
  FaultControl::reset();
  Coalescing heap;
  char* big = static_cast<char*>(heap.malloc(1000));
  char* guard = static_cast<char*>(heap.malloc(16));
  heap.free(big);
  char* p = static_cast<char*>(heap.malloc(100));
  EXPECT_EQ(p, big);
  EXPECT_EQ(heap.getSize(p), 112u);
  char* q = static_cast<char*>(heap.malloc(100));
  EXPECT_EQ(q, big + 112 + 16) << "the split-off rest serves the next request";
  auto chunks = walk(heap);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_TRUE(chunks[2].free);
  EXPECT_EQ(chunks[2].size, 1008u - 2 * (112 + 16));
  heap.free(p);
  heap.free(q);
  heap.free(guard);
  EXPECT_EQ(walk(heap).size(), 1u);
}

TEST(CoalesceHeap, DoesNotSplitOffSlivers) {
  FaultControl::reset();
  Coalescing heap;
  void* a = heap.malloc(128);
  void* guard = heap.malloc(16);
  heap.free(a);
  void* b = heap.malloc(112);  // 16 bytes too many: too small for a chunk
  EXPECT_EQ(b, a);
  EXPECT_EQ(heap.getSize(b), 128u);
  heap.free(b);
  heap.free(guard);
}

TEST(CoalesceHeap, ReturnsNullWhenTheArenaIsExhausted) {
  FaultControl::reset();
  Coalescing heap;
  void* p = heap.malloc(kArena / 2);
  ASSERT_NE(p, nullptr);
  errno = 0;
  EXPECT_EQ(heap.malloc(kArena / 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  heap.free(p);
  EXPECT_EQ(heap.malloc(kArena / 2), p) << "after the free it fits again";
  heap.free(p);
  heap.free(nullptr);
  EXPECT_EQ(heap.malloc(SIZE_MAX - 4), nullptr);
}

TEST(CoalesceHeap, PassesTheModelTestAndCoalescesEverythingAtTheEnd) {
  FaultControl::reset();
  Coalescing heap;
  strata::test::run_heap_model(heap, {.seed = 16, .operations = 100000});
  auto chunks = walk(heap);
  ASSERT_EQ(chunks.size(), 1u) << "all freed: one free chunk spans the arena";
  EXPECT_TRUE(chunks[0].free);
}

TEST(CoalesceHeap, PassesTheModelTestOverTheProcessBreak) {
  CoalesceHeap<SegHeap<lea::kNumBins, lea::size_class, lea::class_size, AdaptHeap<DLList, NullHeap>,
                       CoalesceableHeap<SbrkHeap<>>>>
      heap;
  strata::test::run_heap_model(heap, {.seed = 17, .operations = 50000, .max_size = 20000});
}
