// The region layers' needs, stated as concepts (region/concepts.hpp): the
// reap's own chain satisfies them floor by floor, and a wrong composition is
// rejected by the layer's template head (the project has no compile-failure
// harness, so the rejection is observed with requires-expressions here; a
// real misuse is a compile error naming the unsatisfied concept).
#include <gtest/gtest.h>

#include "strata/layers.hpp"
#include "strata/layers/region.hpp"
#include "region_test_heaps.hpp"

namespace {

using namespace strata::layers;

using Chunks = RegionChunkHeap<ChunkSource>;
using Stream = TaggedStreamHeap<Chunks>;
using Reusing = ClearOptimizedHeap<Stream>;

// Whether a layer can be instantiated over S at all.
template <class S>
concept StacksUnderRegionChunkHeap = requires { typename RegionChunkHeap<S>; };
template <class S>
concept StacksUnderTaggedStreamHeap = requires { typename TaggedStreamHeap<S>; };
template <class S>
concept StacksUnderClearOptimizedHeap = requires { typename ClearOptimizedHeap<S>; };
template <class S>
concept StacksUnderNestedHeap = requires { typename NestedHeap<S>; };

// The reap's chain, floor by floor.
static_assert(ChunkMapper<ChunkSource>);
static_assert(RunSource<Chunks>);
static_assert(TaggedStream<Stream>);
static_assert(TaggedStream<Reusing>);  // ClearOptimizedHeap keeps its Super's interface
static_assert(Nestable<Reusing>);
static_assert(StacksUnderNestedHeap<Reusing>);

// A floor left out or put in the wrong order.
static_assert(!RunSource<ChunkSource>);             // pages, not runs
static_assert(!StacksUnderTaggedStreamHeap<ChunkSource>);
static_assert(!TaggedStream<Chunks>);               // runs, not a tagged stream
static_assert(!StacksUnderClearOptimizedHeap<Chunks>);
static_assert(!StacksUnderClearOptimizedHeap<ZoneHeap<4096, MallocHeap>>);  // a region, but not tagged
static_assert(!ChunkMapper<MallocHeap>);            // a heap is not a page source
static_assert(!StacksUnderRegionChunkHeap<MallocHeap>);

// NestedHeap only needs a class to derive from.
struct Sealed final {};
static_assert(!Nestable<Sealed> && !Nestable<int>);
static_assert(!StacksUnderNestedHeap<Sealed>);

TEST(RegionConcepts, TheConstrainedChainStillAllocatesAndReusesObjects) {
  NestedHeap<Reusing> heap;
  strata::test::RegionOwner<NestedHeap<Reusing>> owner{heap};
  void* p = owner.malloc(40);
  ASSERT_NE(p, nullptr);
  owner.free(p);
  EXPECT_EQ(owner.malloc(40), p);  // ClearOptimizedHeap hands the freed object out first
  heap.clear();
}

}  // namespace
