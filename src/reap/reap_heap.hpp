// The reap as a chain of public region layers (include/strata/layers/region/)
// — top: where memory comes from; bottom: what strata_reap_* calls.
//
// Against the 2002 paper's Reap (§8.1: Sbrk / RegionHeap / CoalesceableHeap /
// LeaHeap / ClearOptimizedHeap / NestedHeap):
//
// * One bump stream for every size until something is freed, as in a
//   hand-written region: objects allocated together sit together. The bump
//   itself is inline in the caller (strata_reap_malloc in strata/reap.h reads
//   the reap's public head, strata_reap_head, which is the stream's cursor).
// * A one-byte boundary tag instead of the paper's 8-byte CoalesceableHeap
//   header: the spare last byte of each slot holds the next object's length,
//   so free and usable_size find any object's size, for a little memory
//   and one byte store per allocation (tagged_stream_heap.hpp
//   says why not a header, a side table or size-class slabs).
// * Size-segregated free lists instead of a Lea heap: a request takes a freed
//   slot of its own length or one at least twice as long, cut, in constant
//   time; the rest of a slot cut for a request is bumped through inline.
//   The paper's noMemoryFreed flag is the inline window: the free that makes
//   8 KiB of freed objects wait closes it (kReapWaitBytes; before that the
//   stream bumps on, and they are reused when its run is used up); the last
//   waiting object to be reused, a request none fits, or a cut slot's rest
//   opens it again; clear() resets.
// * Chunks double (8 KiB first, inside the reap's own mapping, up to 64 MiB);
//   clear() keeps the chunks the round used and replays them in order.
// * A second kind, the sized reap, for callers that give the size at free:
//   the same stream without tags (SizedReapHeap below).
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/layers/region.hpp"
#include "strata/layers/region/sized_reuse_heap.hpp"
#include "strata/layers/region/sized_stream_heap.hpp"
#include "strata/reap.h"

namespace strata::reap_detail {

// Freed objects wait, and the stream keeps bumping inline, until this many
// bytes of them wait (or the run is used up); then they come first. Freeing
// and reusing one object at a time closed and opened the window at every
// free (docs/benchmarks-choices.md, "Reap wait bytes"). At most 8 KiB more
// touched per reap (the size of its first chunk).
inline constexpr std::size_t kReapWaitBytes = 8 * 1024;

using strata::layers::ChunkSource;
using strata::layers::ClearOptimizedHeap;
using strata::layers::NestedHeap;
using strata::layers::RegionChunkHeap;
using strata::layers::SizedReuseHeap;
using strata::layers::SizedStreamHeap;
using strata::layers::TaggedStreamHeap;

// The tree of reaps links every reap, whatever its kind (a sized reap may be
// the child of a tagged one): the heap chains live beside the links.
struct ReapNode {};
using ReapTree = NestedHeap<ReapNode>;

// A tagged reap (strata_reap_create): free(p) finds the size in a tag.
using TaggedReapHeap =
    ClearOptimizedHeap<        // freed objects first (best fit; a cut slot's rest bumped through), else bump
        TaggedStreamHeap<      // one bump stream for all sizes, one-byte boundary tags; huge objects mapped alone
            RegionChunkHeap<   // runs from chunks >= 8 KiB growing x2; clear replays the used ones
                ChunkSource>,  // mmap via strata::platform (plus small process-wide and per-thread caches)
            strata_reap_head>,
        kReapWaitBytes>;  // the stream's cursor is the reap's public head

// A sized reap (strata_reap_create_sized): the caller gives the size at free,
// so objects carry nothing (sized_stream_heap.hpp).
using SizedReapHeap = SizedReuseHeap<  // freed objects first (size-class lists, longer slots cut), else bump
    SizedStreamHeap<                   // one bump stream, 8-byte slots, no tags; huge objects mapped alone
        RegionChunkHeap<ChunkSource>, strata_reap_sized_cursor>,
    kReapWaitBytes>;  // the cursor is the head's sized window

// The chain keeps the project's heap contract.
static_assert(strata::layers::SizedHeap<TaggedReapHeap> && strata::layers::ClearableHeap<TaggedReapHeap>);

// The inline paths (strata/reap.h) and the layers agree on the head.
static_assert(STRATA_REAP_SLOW_CHECKED == strata::layers::kInlineClosedChecked);
static_assert(STRATA_REAP_SLOW_FREED == strata::layers::kInlineClosedFreed);

}  // namespace strata::reap_detail
