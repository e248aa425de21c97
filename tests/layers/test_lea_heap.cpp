#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "support/size_classes.hpp"

using namespace strata::layers;

static_assert(SizedHeap<LeaHeap>);
static_assert(std::is_default_constructible_v<LeaHeap>);

TEST(LeaHeap, SizeClassesAreExactTo512ThenFourPerDoubling) {
  using namespace lea;
  EXPECT_EQ(size_class(0), 0u);
  EXPECT_EQ(size_class(16), 0u);
  EXPECT_EQ(size_class(17), 1u);
  EXPECT_EQ(size_class(512), 31u);
  EXPECT_EQ(class_size(31), 512u);
  EXPECT_EQ(class_size(32), 640u);
  EXPECT_EQ(class_size(35), 1024u);
  EXPECT_EQ(class_size(36), 1280u);
  EXPECT_EQ(class_size(kNumBins - 1), SIZE_MAX);
  EXPECT_EQ(size_class(SIZE_MAX), kNumBins - 1);
  // All but the last class (SIZE_MAX has no byte more).
  ASSERT_NO_FATAL_FAILURE(strata::test::expect_size_classes_consistent(size_class, class_size, kNumBins - 1));
}

TEST(LeaHeap, SmallChunksComeBackFromQuickListsLifo) {
  LeaHeap heap;
  void* a = heap.malloc(40);
  void* b = heap.malloc(40);
  void* c = heap.malloc(40);
  // b and c follow their predecessors in the break: same chunk size.
  ASSERT_EQ(heap.getSize(b), heap.getSize(c));
  heap.free(b);
  heap.free(c);
  EXPECT_EQ(heap.malloc(heap.getSize(b)), c);
  EXPECT_EQ(heap.malloc(heap.getSize(b)), b);
  heap.free(a);
  heap.free(b);
  heap.free(c);
}

TEST(LeaHeap, MediumChunksAreSplitAndCoalesced) {
  LeaHeap heap;
  char* a = static_cast<char*>(heap.malloc(1000));
  char* b = static_cast<char*>(heap.malloc(1000));
  char* guard = static_cast<char*>(heap.malloc(1000));
  ASSERT_TRUE(a && b && guard);
  ASSERT_EQ(b, a + heap.getSize(a) + 16) << "neighbours in the break";
  heap.free(a);
  heap.free(b);  // merges with a
  void* both = heap.malloc(2000);
  EXPECT_EQ(both, a) << "the coalesced chunk serves a request neither could alone";
  heap.free(both);
  void* part = heap.malloc(300);
  EXPECT_EQ(part, a) << "split from the front of the free chunk";
  EXPECT_LT(heap.getSize(part), 400u);
  heap.free(part);
  heap.free(guard);
}

TEST(LeaHeap, LargeRequestsAreMapped) {
  LeaHeap heap;
  auto* p = static_cast<unsigned char*>(heap.malloc(lea::kMmapThreshold));
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(ChunkHeader::of(p)->has(ChunkHeader::kMmapped));
  EXPECT_GE(heap.getSize(p), lea::kMmapThreshold);
  std::memset(p, 3, lea::kMmapThreshold);
  void* q = heap.malloc(lea::kMmapThreshold - 1);
  EXPECT_FALSE(ChunkHeader::of(q)->has(ChunkHeader::kMmapped));
  heap.free(p);
  heap.free(q);
}

TEST(LeaHeap, ImpossibleRequestsAreNullWithEnomem) {
  LeaHeap heap;
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX / 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  heap.free(nullptr);
}

TEST(LeaHeap, PassesTheModelTest) {
  LeaHeap heap;
  strata::test::run_heap_model(heap, {.seed = 31});
}

TEST(LeaHeap, PassesTheModelTestWithLargeObjects) {
  LeaHeap heap;
  strata::test::run_heap_model(heap, {.seed = 32, .operations = 8000, .max_live = 200, .max_size = 1 << 18});
}

TEST(LeaHeap, UsesLessMemoryThanKingsleyOnMixedSizes) {
  // Coalescing and exact-ish bins beat power-of-two classes on the break's high-water mark.
  auto run = [](auto& heap) {
    std::vector<void*> live;
    for (int round = 0; round < 20; ++round) {
      for (int i = 0; i < 500; ++i) live.push_back(heap.malloc(static_cast<std::size_t>(65 + (i * 37) % 3000)));
      for (std::size_t i = 0; i < live.size(); i += 2) heap.free(live[i]);
      std::vector<void*> kept;
      for (std::size_t i = 1; i < live.size(); i += 2) kept.push_back(live[i]);
      live.swap(kept);
    }
    for (void* p : live) heap.free(p);
  };
  const std::size_t start = SbrkHeap<>::bytes_used();
  {
    LeaHeap lea;
    run(lea);
  }
  const std::size_t lea_bytes = SbrkHeap<>::bytes_used() - start;
  {
    KingsleyHeap kingsley;
    run(kingsley);
  }
  const std::size_t kingsley_bytes = SbrkHeap<>::bytes_used() - start - lea_bytes;
  EXPECT_LT(lea_bytes, kingsley_bytes) << "lea " << lea_bytes << " kingsley " << kingsley_bytes;
}
