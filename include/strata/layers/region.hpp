// Region layers: the building blocks of strata reaps (regions you can also
// free single objects from), after the 2002 reaps paper's §8.1. A typical chain:
//
//   NestedHeap<ClearOptimizedHeap<TaggedStreamHeap<RegionChunkHeap<ChunkSource>>>>
//
// See src/reap/reap_heap.hpp for the one strata reaps use, and docs/reaps.md.
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/layers/region/chunk_source.hpp"
#include "strata/layers/region/clear_optimized_heap.hpp"
#include "strata/layers/region/concepts.hpp"
#include "strata/layers/region/nested_heap.hpp"
#include "strata/layers/region/region_chunk_heap.hpp"
#include "strata/layers/region/run_stream.hpp"
#include "strata/layers/region/sized_reuse_heap.hpp"
#include "strata/layers/region/sized_stream_heap.hpp"
#include "strata/layers/region/tagged_stream_heap.hpp"
