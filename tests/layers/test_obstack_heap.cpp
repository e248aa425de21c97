#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "strata/layers.hpp"
#include "util_test_heaps.hpp"

using strata::layers::ObstackHeap;
using strata::test::FailingHeap;

namespace {

constexpr std::size_t kChunk = 1024;
using Obstack = ObstackHeap<kChunk, FailingHeap>;
static_assert(!strata::layers::SizedHeap<Obstack>);  // the parent's getSize is hidden
static_assert(!strata::layers::ReallocatingHeap<ObstackHeap<kChunk, strata::layers::ANSIWrapper<FailingHeap>>>);

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % strata::layers::kAlignment == 0; }

TEST(ObstackHeap, AllocatesAlignedDistinctObjectsInChunks) {
  Obstack heap;
  std::vector<std::pair<unsigned char*, std::size_t>> objects;
  for (std::size_t i = 0; i < 200; ++i) {
    const std::size_t size = 1 + (i * 37) % 300;
    auto* p = static_cast<unsigned char*>(heap.malloc(size));
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(aligned(p)) << p;
    std::memset(p, static_cast<int>(i), size);
    objects.emplace_back(p, size);
  }
  for (std::size_t i = 0; i < objects.size(); ++i)
    for (std::size_t b = 0; b < objects[i].second; ++b)
      ASSERT_EQ(objects[i].first[b], static_cast<unsigned char>(i)) << "object " << i << " byte " << b;
  EXPECT_GT(heap.mallocs, 1u);  // several chunks were needed
  EXPECT_LT(heap.mallocs, 200u);  // but far fewer than objects
}

TEST(ObstackHeap, GrowsAnObjectAcrossChunksAndFinishesIt) {
  Obstack heap;
  void* before = heap.malloc(100);
  std::string expected;
  for (int i = 0; i < 500; ++i) {
    const std::string piece = "piece" + std::to_string(i) + ";";
    ASSERT_TRUE(heap.append(piece.data(), piece.size()));
    expected += piece;
  }
  ASSERT_GT(expected.size(), kChunk * 2);  // it had to move to bigger chunks
  EXPECT_EQ(heap.objectSize(), expected.size());
  const char* base = static_cast<const char*>(heap.base());
  auto* finished = static_cast<char*>(heap.finish());
  EXPECT_EQ(finished, base);
  EXPECT_TRUE(aligned(finished));
  EXPECT_EQ(std::string(finished, expected.size()), expected);
  EXPECT_EQ(heap.objectSize(), 0u);  // a new, empty object begins
  std::memset(before, 1, 100);      // the earlier object is still ours (ASan checks)
}

TEST(ObstackHeap, GrowLeavesUninitialisedRoomAndMallocCompletesAGrowingObject) {
  Obstack heap;
  ASSERT_TRUE(heap.grow(10));
  std::memcpy(heap.base(), "0123456789", 10);
  // Like obstack_alloc while an object grows: the new bytes join that object.
  auto* p = static_cast<char*>(heap.malloc(6));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::memcmp(p, "0123456789", 10), 0);
}

TEST(ObstackHeap, AMovedObjectsEmptyChunkGoesBack) {
  Obstack heap;
  ASSERT_TRUE(heap.grow(100));  // chunk 1 holds only the growing object
  ASSERT_EQ(heap.mallocs, 1u);
  ASSERT_TRUE(heap.grow(5000));  // move to a bigger chunk: chunk 1 is empty now
  EXPECT_EQ(heap.mallocs, 2u);
  EXPECT_EQ(heap.frees, 1u);
  EXPECT_EQ(heap.objectSize(), 5100u);
}

TEST(ObstackHeap, FreeReleasesAnObjectAndEverythingAfterIt) {
  Obstack heap;
  std::vector<void*> objects;
  for (int i = 0; i < 40; ++i) objects.push_back(heap.malloc(200));  // ~5 per chunk: 8+ chunks
  const std::size_t chunks = heap.live();
  ASSERT_GE(chunks, 8u);
  heap.free(objects[10]);
  EXPECT_LT(heap.live(), chunks);  // the chunks above object 10 went back
  EXPECT_GE(heap.live(), 2u);      // the ones holding objects 0..9 did not
  // The space is reused: the next object sits where object 10 was.
  EXPECT_EQ(heap.malloc(200), objects[10]);
  for (int i = 0; i < 10; ++i) std::memset(objects[i], 0, 200);  // still valid
  heap.free(objects[0]);
  EXPECT_EQ(heap.live(), 1u);  // only the first chunk remains
  EXPECT_EQ(heap.malloc(8), objects[0]);
}

TEST(ObstackHeap, FreeDiscardsTheGrowingObjectToo) {
  Obstack heap;
  void* a = heap.malloc(16);
  ASSERT_TRUE(heap.grow(3000));
  heap.free(a);
  EXPECT_EQ(heap.objectSize(), 0u);
  EXPECT_EQ(heap.base(), a);
}

TEST(ObstackHeap, ClearAndDestructorGiveEveryChunkBack) {
  FailingHeap* parent;
  {
    Obstack heap;
    parent = &heap;
    for (int i = 0; i < 30; ++i) ASSERT_NE(heap.malloc(300), nullptr);
    heap.clear();
    EXPECT_EQ(heap.live(), 0u);
    for (int i = 0; i < 30; ++i) ASSERT_NE(heap.malloc(300), nullptr);
    EXPECT_GT(heap.live(), 0u);
  }
  (void)parent;  // destroyed with the heap; ASan's leak check covers the destructor
}

TEST(ObstackHeap, FreeNullIsANoOp) {
  Obstack heap;
  void* a = heap.malloc(10);
  heap.free(nullptr);
  EXPECT_EQ(heap.malloc(10), static_cast<char*>(a) + 16);
}

TEST(ObstackHeap, OutOfMemoryIsNullOrFalseAndKeepsTheGrowingObject) {
  Obstack heap;
  ASSERT_TRUE(heap.append("abc", 3));
  heap.fail_after(0);
  EXPECT_FALSE(heap.grow(kChunk * 4));
  EXPECT_EQ(heap.objectSize(), 3u);
  EXPECT_EQ(std::memcmp(heap.base(), "abc", 3), 0);
  EXPECT_EQ(heap.malloc(kChunk * 4), nullptr);  // grow fails, nothing finished
  EXPECT_EQ(heap.objectSize(), 3u);
  EXPECT_FALSE(heap.grow(SIZE_MAX));
  heap.never_fail();
  auto* p = static_cast<char*>(heap.finish());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::memcmp(p, "abc", 3), 0);
}

TEST(ObstackHeap, FinishOnAFreshObstackNeedsAChunk) {
  Obstack heap;
  heap.fail_after(0);
  EXPECT_EQ(heap.finish(), nullptr);
  heap.never_fail();
  void* empty = heap.finish();
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(heap.malloc(1), empty);  // a zero-size object takes no room
}

TEST(ObstackHeapDeathTest, FreeOfAForeignPointerAbortsNamingTheAddress) {
  Obstack heap;
  void* a = heap.malloc(10);
  static char elsewhere[16];
  char address[32];
  std::snprintf(address, sizeof address, "%p", static_cast<void*>(elsewhere));
  EXPECT_DEATH(heap.free(elsewhere), std::string("strata ObstackHeap: free of pointer ") + address);
  heap.free(a);
}

}  // namespace

namespace {

// Scopes as gcc's parser uses obstacks: objects of a scope are freed by freeing
// the scope's first object. Over KingsleyHeap, chunks are recycled by its bins.
TEST(ObstackHeap, NestedScopesOverKingsleyHeap) {
  ObstackHeap<4096, strata::layers::KingsleyHeap> heap;
  std::vector<std::vector<std::pair<unsigned char*, unsigned char>>> scopes;
  for (int round = 0; round < 50; ++round) {
    scopes.emplace_back();
    for (int i = 0; i < 40; ++i) {
      const auto tag = static_cast<unsigned char>(round * 40 + i);
      auto* p = static_cast<unsigned char*>(heap.malloc(8 + (i * 13) % 400));
      ASSERT_NE(p, nullptr);
      ASSERT_TRUE(aligned(p));
      std::memset(p, tag, 8);
      scopes.back().emplace_back(p, tag);
    }
    if (round % 3 == 2) {  // leave two scopes: free the older one's first object
      const auto first = scopes[scopes.size() - 2].front().first;
      scopes.pop_back();
      scopes.pop_back();
      heap.free(first);
    }
    for (const auto& scope : scopes)  // surviving objects are intact
      for (const auto& [p, tag] : scope)
        for (int b = 0; b < 8; ++b) ASSERT_EQ(p[b], tag);
  }
}

}  // namespace
