// KingsleyCoalescingHeap — the paper's §8 experiment, "KingsleyHeap + coal.":
// KingsleyHeap's power-of-two bins with LeaHeap's coalescing and splitting
// layers added, to see how much of Kingsley's memory is lost for want of them.
//
// Policy:
//   * a request (rounded to 16 bytes) takes the first chunk of the first
//     non-empty power-of-two bin that fits, and the excess (>= 32 bytes) is split
//     off as a free chunk: objects get their size, not Kingsley's class size;
//   * free merges the chunk with free neighbours at once and files it in the bin
//     of the largest power of two it covers (CoalesceHeap, SegHeap of DLList bins,
//     CoalesceableHeap: a 16-byte boundary tag per chunk, like Kingsley's header);
//   * fresh chunks come from the process break (SbrkHeap) and are never returned;
//   * requests above 1 GiB (Kingsley's largest class): a mapping of their own.
// Splitting to the request, not to the class, is what the paper's Table 6 implies:
// its KingsleyHeap + coal. takes about LeaHeap's memory, which chunks rounded up
// to powers of two could not (docs/heap-layers.md).
// Not thread-safe (wrap it in a lock); 16-byte aligned; getSize is the chunk's size.
#pragma once
#include <cstddef>
#include <cstdint>

#include "strata/layers/building_blocks/adapt_heap.hpp"
#include "strata/layers/building_blocks/coalesce_heap.hpp"
#include "strata/layers/building_blocks/dl_list.hpp"
#include "strata/layers/combining/seg_heap.hpp"
#include "strata/layers/combining/select_mmap_heap.hpp"
#include "strata/layers/general/kingsley_heap.hpp"
#include "strata/layers/object_representation/coalesceable_heap.hpp"
#include "strata/layers/top/mmap_heap.hpp"
#include "strata/layers/top/null_heap.hpp"
#include "strata/layers/top/sbrk_heap.hpp"

namespace strata::layers {

namespace kingsley_coalescing {

// Requests above Kingsley's largest class (1 GiB) are mapped.
inline constexpr std::size_t kMmapThreshold = kingsley::class_size(kingsley::kNumBins - 1) + 1;
// The bins: Kingsley's classes and one more whose bound is unlimited, so that a
// merged chunk larger than every class still has a bin (the one below it).
inline constexpr std::size_t kNumBins = kingsley::kNumBins + 1;

constexpr std::size_t bin_of(std::size_t size) noexcept {
  const std::size_t size_class = kingsley::size_class(size);
  return size_class < kingsley::kNumBins ? size_class : kNumBins - 1;
}
constexpr std::size_t bin_size(std::size_t bin) noexcept {
  return bin < kingsley::kNumBins ? kingsley::class_size(bin) : SIZE_MAX;
}

}  // namespace kingsley_coalescing

// The chain, from what the user calls down to where memory comes from.
using KingsleyCoalescingHeapChain =
    SelectMmapHeap<kingsley_coalescing::kMmapThreshold,        // > 1 GiB: a mapping of its own
                   CoalesceHeap<                               // split on malloc, merge neighbours on free
                       SegHeap<kingsley_coalescing::kNumBins,  // Kingsley's power-of-two bins: first fitting bin
                               kingsley_coalescing::bin_of,    //   size -> bin
                               kingsley_coalescing::bin_size,  //   bin -> size bound
                               AdaptHeap<DLList, NullHeap>,    //   each bin: FIFO doubly linked free chunks
                               CoalesceableHeap<               //   no fit: a new boundary-tagged chunk
                                   SbrkHeap<>>>>,              //     from the process break
                   MmapHeap>;                                  // where the large ones are mapped

class KingsleyCoalescingHeap : public KingsleyCoalescingHeapChain {};

}  // namespace strata::layers
