// The reap's own layers one at a time (src/reap/layers/), below the C API.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "support/heap_model.hpp"

#include "reap/reap_heap.hpp"

namespace {

using namespace strata::reap_detail;

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// The layers keep memory hidden from ASan/Valgrind until their owner hands an
// object out (reap.cpp does); for the heap model this adapter is the owner.
template <class H>
struct Owner {
  H& heap;
  void* malloc(std::size_t size) {
    void* p = heap.malloc(size);
    if (p != nullptr) instrument::expose(p, heap.getSize(p));
    return p;
  }
  void free(void* p) { heap.free(p); }
  std::size_t getSize(void* p) { return heap.getSize(p); }
};

// ---- NestedHeap ----------------------------------------------------------

struct Named {
  int name = 0;
};
using Node = NestedHeap<Named>;

std::vector<int> pre_order(Node& top) {
  std::vector<int> seen;
  top.forEachPreOrder([&](Node* n) { seen.push_back(n->name); });
  return seen;
}
std::vector<int> post_order(Node& top) {
  std::vector<int> seen;
  top.forEachPostOrder([&](Node* n) { seen.push_back(n->name); });
  return seen;
}

TEST(NestedHeap, WalksSubtreesParentsFirstOrChildrenFirst) {
  //  1 ─┬─ 2 ─┬─ 4
  //     │     └─ 5
  //     └─ 3 ── 6      (children are linked in front: the last attached comes first)
  Node n[7];
  for (int i = 1; i <= 6; ++i) n[i].name = i;
  n[2].attachTo(&n[1]);
  n[3].attachTo(&n[1]);
  n[4].attachTo(&n[2]);
  n[5].attachTo(&n[2]);
  n[6].attachTo(&n[3]);
  EXPECT_EQ(pre_order(n[1]), (std::vector<int>{1, 3, 6, 2, 5, 4}));
  EXPECT_EQ(post_order(n[1]), (std::vector<int>{6, 3, 5, 4, 2, 1}));
  EXPECT_EQ(pre_order(n[2]), (std::vector<int>{2, 5, 4}));  // a subtree stays inside itself
  EXPECT_EQ(post_order(n[2]), (std::vector<int>{5, 4, 2}));
  n[2].detach();
  EXPECT_EQ(pre_order(n[1]), (std::vector<int>{1, 3, 6}));
  EXPECT_EQ(n[2].parent(), nullptr);
  n[6].detach();
  n[3].detach();
  EXPECT_EQ(post_order(n[1]), (std::vector<int>{1}));
}

// ---- RegionChunkHeap -----------------------------------------------------

using Region = RegionChunkHeap<ChunkSource>;

TEST(RegionChunkHeap, SlabsAreAlignedDistinctAndChunksDouble) {
  Region region;
  std::set<std::uintptr_t> slabs;
  for (int i = 0; i < 1000; ++i) {
    void* s = region.takeSlabs(1 + i % 4);
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(addr(s) % kSlabBytes, 0u);
    ASSERT_TRUE(slabs.insert(addr(s)).second);
  }
  // ~2500 slabs = 10 MiB in chunks from 16 KiB doubling: about 10 chunks.
  EXPECT_LE(region.chunks(), 12u);
  EXPECT_EQ(region.chunks(), region.mappings());
  const std::size_t chunks = region.chunks();
  region.clear();
  EXPECT_EQ(region.chunks(), chunks) << "clear keeps the chunks the round used";
  void* again = region.takeSlabs(1);
  region.clear();
  EXPECT_EQ(region.chunks(), 1u) << "a round that needed one chunk keeps one";
  EXPECT_EQ(region.takeSlabs(1), again) << "and bumps from the same place";
  region.releaseAll();
  EXPECT_EQ(region.mappings(), 0u);
  EXPECT_EQ(region.bytesHeld(), 0u);
}

// ---- SizeClassSlabHeap: a region of header-free objects --------------------

using SlabRegion = SizeClassSlabHeap<LargeObjectHeap<RegionChunkHeap<ChunkSource>>>;

TEST(SizeClassSlabHeap, IsARegionWithSizesFromTheSlabHeader) {
  SlabRegion heap;
  Owner<SlabRegion> owner{heap};
  for (std::size_t size : {0u, 1u, 16u, 100u, 1024u, 1025u, 2000u, 4032u, 4033u, 50000u}) {
    void* p = owner.malloc(size);
    ASSERT_NE(p, nullptr);
    EXPECT_GE(heap.getSize(p), size);
    EXPECT_EQ(addr(p) % 16, 0u);
  }
  void* p = owner.malloc(40);
  owner.free(p);  // a region does not reuse small objects
  EXPECT_NE(owner.malloc(40), p);
  strata::test::run_heap_model(owner, {.seed = 5, .operations = 20000, .max_size = 9000});
  heap.clear();
  heap.releaseAll();
}

// ---- ClearOptimizedHeap over the rest: the reap without nesting -----------

TEST(ClearOptimizedHeap, ReusesFreedObjectsAndPassesTheHeapModel) {
  ClearOptimizedHeap<SlabRegion> heap;
  Owner<ClearOptimizedHeap<SlabRegion>> owner{heap};
  void* p = owner.malloc(40);
  owner.free(p);
  EXPECT_EQ(owner.malloc(48), p);  // same class: reused at once
  strata::test::run_heap_model(owner, {.seed = 6, .operations = 40000, .max_size = 9000});
  heap.clear();
  EXPECT_EQ(heap.freedObjects(size_class_of(40)), 0u);
  heap.releaseAll();
}

}  // namespace
