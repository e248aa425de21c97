// The reap as a chain of heap layers — top: where memory comes from; bottom:
// what strata_reap_* calls.
//
// Design choices, against the paper's Reap (Berger et al. 2002, §8.1:
// Sbrk / RegionHeap / CoalesceableHeap / LeaHeap / ClearOptimizedHeap / NestedHeap):
//
// * No per-object header for small objects. The paper's CoalesceableHeap adds
//   8 bytes to every object so that free can find its size; in a region
//   workload of 8–64-byte objects that is 20–50% more memory traffic than a
//   plain region. Here every small object lives in a 4 KiB slab of one size
//   class and finds its size in the slab's header ((ptr - 1) rounded down to
//   4 KiB), so a 16-byte object costs 16 bytes, exactly as in a bump region.
// * Size-segregated free lists instead of a Lea heap for freed objects. A
//   freed object goes onto the LIFO list of its class; allocation pops it in
//   three instructions. No splitting or coalescing: region programs free
//   objects of the sizes they allocate again, and clear() resets everything
//   anyway. (Exact size classes do not reuse a freed 64-byte object for a
//   48-byte request; docs/reaps.md says so.)
// * The fast path is: round the size to 16, bump the class's cursor if the
//   object fits in its slab — 16 instructions, one store, no stack frame. The
//   paper's "nothing freed yet" flag is per class: a free suspends the class's
//   bumping, so its allocations go (one call away) to the freed objects first.
// * Chunks double (8 KiB first, up to 64 MiB); clear() keeps the chunks the
//   round used and replays them in order: a reap filled and cleared in a loop
//   touches the same memory every round, like a plain region.
#pragma once
#include "reap/layers/chunk_source.hpp"
#include "reap/layers/clear_optimized_heap.hpp"
#include "reap/layers/large_object_heap.hpp"
#include "reap/layers/nested_heap.hpp"
#include "reap/layers/region_chunk_heap.hpp"
#include "reap/layers/size_class_slab_heap.hpp"
#include "strata/layers/heap.hpp"

namespace strata::reap_detail {

using ReapHeap =
    NestedHeap<              // a tree of reaps: clear and destroy reach the subtree
    ClearOptimizedHeap<      // freed small objects first (per-class LIFO lists, bumping suspended), else bump
    SizeClassSlabHeap<       // header-free small objects: bump per size class within 4 KiB slabs
    LargeObjectHeap<         // bigger objects: slab spans with a header, huge ones mapped alone
    RegionChunkHeap<         // slabs bumped out of chunks >= 8 KiB growing x2; clear replays the used ones
    ChunkSource>>>>>;        // mmap via strata::platform; ASan/Valgrind see fresh memory as hidden

}  // namespace strata::reap_detail

namespace strata::reap_detail {
// The chain keeps the project's heap contract at every level that hands out objects.
static_assert(strata::layers::SizedHeap<ReapHeap> && strata::layers::ClearableHeap<ReapHeap>);
static_assert(strata::layers::SizedHeap<SizeClassSlabHeap<LargeObjectHeap<RegionChunkHeap<ChunkSource>>>>);
}  // namespace strata::reap_detail
