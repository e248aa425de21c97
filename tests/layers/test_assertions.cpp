// STRATA_ASSERT in the heap layers: on here whatever the build type (the
// layers are header-only, so this file decides), and an invariant broken on
// purpose stops the program with the assertion's text.
#undef STRATA_ASSERTIONS
#define STRATA_ASSERTIONS 1
#include <gtest/gtest.h>

#include "core_test_heaps.hpp"
#include "intrusive_list_items.hpp"
#include "strata/assert.hpp"
#include "strata/layers.hpp"

using namespace strata::layers;
using strata::test::ListItem;

namespace {

using Items = IntrusiveDList<ListItem, &ListItem::link>;
using Tags = CoalesceableHeap<strata::test::ArenaHeap<std::size_t{1} << 20>>;
using Bins = SegHeap<lea::kNumBins, lea::size_class, lea::class_size, AdaptHeap<DLList, NullHeap>, Tags>;
using Coalescing = CoalesceHeap<Bins>;

TEST(LayerAssertionDeathTest, RemovingANodeOfAnotherListFires) {
  strata::test::NumberedItems<3> items;
  Items mine, other;
  mine.push_back(&items[0]);
  other.push_back(&items[1]);
  other.push_back(&items[2]);
  EXPECT_DEATH(mine.remove(&items[1]), "strata: assertion failed: .*head_ == node.*intrusive_dlist.hpp");
  other.remove(&items[1]);  // its own list: fine
  EXPECT_EQ(other.front(), &items[2]);
}

TEST(LayerAssertionDeathTest, FreeingAChunkTwiceFires) {
  Coalescing heap;
  void* keep = heap.malloc(64);
  void* p = heap.malloc(64);
  void* after = heap.malloc(64);
  heap.free(p);
  EXPECT_DEATH(heap.free(p), "strata: assertion failed: !Super::isFree\\(ptr\\).*coalesce_heap.hpp");
  heap.free(keep);
  heap.free(after);
}

TEST(LayerAssertionDeathTest, FreeingTheObjectJustFreedFires) {
  FreelistHeap<MallocHeap> heap;
  void* p = heap.malloc(32);
  heap.free(p);
  EXPECT_DEATH(heap.free(p), "strata: assertion failed: .*freelist_heap.hpp");
}

}  // namespace
