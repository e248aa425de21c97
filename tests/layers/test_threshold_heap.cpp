// ThresholdHeap (LeaHeap's quick lists) and SelectMmapHeap (LeaHeap's mmap path),
// over a coalescing heap in a private arena so the effects can be observed.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

using namespace strata::layers;
using strata::test::ArenaHeap;
using strata::test::FaultControl;

namespace {

template <std::size_t Arena>
using Medium = CoalesceHeap<SegHeap<lea::kNumBins, lea::size_class, lea::class_size, AdaptHeap<DLList, NullHeap>,
                                    CoalesceableHeap<ArenaHeap<Arena>>>>;
using Quick = ThresholdHeap<64, 512, Medium<std::size_t{1} << 20>>;

}  // namespace

TEST(ThresholdHeap, RecyclesSmallChunksByExactSizeLifo) {
  FaultControl::reset();
  Quick heap;
  // In the arena the first chunk has the requested 48 bytes; the following ones
  // also own the fence slot of their predecessor's block: 64 bytes.
  void* a = heap.malloc(40);
  void* b = heap.malloc(40);
  void* c = heap.malloc(40);
  ASSERT_EQ(heap.getSize(a), 48u);
  ASSERT_EQ(heap.getSize(b), 64u);
  ASSERT_EQ(heap.getSize(c), 64u);
  heap.free(a);
  heap.free(b);
  heap.free(c);
  const std::size_t used = heap.arena_used();
  EXPECT_EQ(heap.malloc(64), c) << "LIFO within the 64-byte list";
  EXPECT_EQ(heap.malloc(49), b);
  EXPECT_EQ(heap.malloc(33), a) << "a 33..48-byte request takes the 48-byte list";
  EXPECT_EQ(heap.arena_used(), used) << "all from the quick lists";
  void* d = heap.malloc(40);
  EXPECT_NE(d, nullptr);
  EXPECT_GT(heap.arena_used(), used) << "48-byte list empty: exact size, no borrowing from 64";
}

TEST(ThresholdHeap, KeepsQuickChunksInUseUntilConsolidation) {
  FaultControl::reset();
  Quick heap;
  void* a = heap.malloc(32);
  void* b = heap.malloc(32);
  void* guard = heap.malloc(32);
  const std::size_t merged = heap.getSize(a) + 16 + heap.getSize(b);
  heap.free(a);
  heap.free(b);
  EXPECT_FALSE(heap.isFree(a)) << "cached, so the coalescer leaves it alone";
  EXPECT_FALSE(heap.isFree(b));
  heap.consolidate();
  EXPECT_TRUE(heap.isFree(a));
  EXPECT_EQ(heap.getSize(a), merged) << "a and b coalesced once handed back";
  heap.free(guard);
}

TEST(ThresholdHeap, ALargeRequestConsolidatesFirst) {
  FaultControl::reset();
  Quick heap;
  void* a = heap.malloc(32);
  void* b = heap.malloc(32);
  void* guard = heap.malloc(32);
  const std::size_t merged = heap.getSize(a) + 16 + heap.getSize(b);
  heap.free(a);
  heap.free(b);
  void* medium = heap.malloc(300);  // below 512: quick lists untouched
  EXPECT_FALSE(heap.isFree(a));
  void* large = heap.malloc(512);
  EXPECT_TRUE(heap.isFree(a)) << "handed back to the coalescing heap first";
  EXPECT_EQ(heap.getSize(a), merged);
  heap.free(medium);
  heap.free(large);
  heap.free(guard);
}

TEST(ThresholdHeap, AMissConsolidatesOnceTheListsHoldEnough) {
  // The program's small sizes drift: 4,000 chunks of one size are freed, then
  // another size is wanted. The first miss hands the cached chunks back, so
  // the new size is carved from them instead of from fresh memory.
  FaultControl::reset();
  Quick heap;
  std::vector<void*> old_size(4000);
  for (void*& p : old_size) p = heap.malloc(24);
  for (void* p : old_size) heap.free(p);
  const std::size_t used = heap.arena_used();
  std::vector<void*> new_size(2000);
  for (void*& p : new_size) ASSERT_NE(p = heap.malloc(40), nullptr);
  EXPECT_LT(heap.arena_used() - used, std::size_t{4096}) << "reused the consolidated chunks";
  for (void* p : new_size) heap.free(p);
}

TEST(ThresholdHeap, AMissBelowTheHeldBoundKeepsTheLists) {
  FaultControl::reset();
  Quick heap;
  void* a = heap.malloc(24);
  void* guard = heap.malloc(24);
  heap.free(a);
  void* b = heap.malloc(40);  // a miss, but the lists hold 32 bytes only
  EXPECT_FALSE(heap.isFree(a)) << "still cached: no consolidation for a small hoard";
  EXPECT_EQ(heap.malloc(24), a);
  heap.free(b);
  heap.free(guard);
}

TEST(ThresholdHeap, ConsolidatesAndRetriesWhenOutOfMemory) {
  FaultControl::reset();
  ThresholdHeap<64, 512, Medium<4096>> heap;
  // Fill the 4 KiB arena with 48-byte chunks (64 bytes each with the header).
  void* objects[64];
  std::size_t n = 0;
  while (n < 64 && (objects[n] = heap.malloc(40)) != nullptr) ++n;
  ASSERT_GT(n, 40u);
  for (std::size_t i = 0; i < n; ++i) heap.free(objects[i]);
  // 200 bytes fit only once the cached chunks are coalesced.
  void* p = heap.malloc(200);
  EXPECT_NE(p, nullptr);
  errno = 0;
  EXPECT_EQ(heap.malloc(8192), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  heap.free(nullptr);
}

TEST(ThresholdHeap, PassesTheModelTest) {
  FaultControl::reset();
  ThresholdHeap<64, 512, Medium<std::size_t{16} << 20>> heap;
  strata::test::run_heap_model(heap, {.seed = 18, .operations = 100000});
}

TEST(SelectMmapHeap, MapsRequestsAtOrAboveTheThreshold) {
  FaultControl::reset();
  SelectMmapHeap<4096, Medium<std::size_t{1} << 20>, MmapHeap> heap;
  const std::size_t used = heap.arena_used();
  auto* big = static_cast<unsigned char*>(heap.malloc(4096));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(heap.arena_used(), used) << "not from the arena";
  EXPECT_TRUE(ChunkHeader::of(big)->has(ChunkHeader::kMmapped));
  EXPECT_EQ(heap.getSize(big), 4096u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big) % 16, 0u);
  std::memset(big, 1, 4096);
  void* small = heap.malloc(4095);
  EXPECT_FALSE(ChunkHeader::of(small)->has(ChunkHeader::kMmapped));
  EXPECT_GT(heap.arena_used(), used);
  heap.free(big);
  heap.free(small);
}

TEST(SelectMmapHeap, FallsBackToMmapWhenTheSmallHeapIsOutOfMemory) {
  FaultControl::reset();
  SelectMmapHeap<std::size_t{1} << 20, Medium<4096>, MmapHeap> heap;
  void* p = heap.malloc(10000);  // below the threshold, but the arena is too small
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(ChunkHeader::of(p)->has(ChunkHeader::kMmapped));
  heap.free(p);
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX - 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  heap.free(nullptr);
}
