// LeaHeap — the paper's §6.2: a layered model of the Lea allocator (dlmalloc
// 2.7.0). Not thread-safe (wrap it in a lock); 16-byte aligned; getSize is the
// chunk's usable size.
//
// Policy:
//   * large (>= 128 KiB): its own mapping, unmapped on free (SelectMmapHeap).
//   * small (chunks of <= 64 bytes once freed): exact-size LIFO quick lists,
//     not coalesced while cached; a request of >= 512 bytes (or running out of
//     memory) first hands them all back to the coalescing heap (ThresholdHeap).
//   * medium: every chunk has a 16-byte boundary tag (size, previous-chunk-free
//     bit); malloc takes the first chunk of the first non-empty bin that fits —
//     bins of exact 16-byte sizes up to 512, then 4 bins per power of two, FIFO
//     doubly linked — and splits off the excess (>= 32 bytes) as a free chunk;
//     free merges the chunk with free neighbours at once (CoalesceHeap, SegHeap,
//     AdaptHeap<DLList>, CoalesceableHeap).
//   * fresh medium chunks come from the process break (SbrkHeap), adjacent to the
//     previous ones, so they coalesce across requests; break memory is never
//     returned to the system.
// Not modelled from dlmalloc: the "top" chunk and trimming, the designated victim,
// deferred coalescing of unsorted chunks, sorted large bins.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

#include "strata/layers/building_blocks/adapt_heap.hpp"
#include "strata/layers/building_blocks/coalesce_heap.hpp"
#include "strata/layers/building_blocks/dl_list.hpp"
#include "strata/layers/combining/seg_heap.hpp"
#include "strata/layers/combining/select_mmap_heap.hpp"
#include "strata/layers/combining/threshold_heap.hpp"
#include "strata/layers/object_representation/coalesceable_heap.hpp"
#include "strata/layers/top/mmap_heap.hpp"
#include "strata/layers/top/null_heap.hpp"
#include "strata/layers/top/sbrk_heap.hpp"

namespace strata::layers {

namespace lea {

inline constexpr std::size_t kMmapThreshold = std::size_t{128} << 10;  // dlmalloc's default
inline constexpr std::size_t kQuickMax = 64;                           // quick-list chunk sizes
inline constexpr std::size_t kConsolidateRequest = 512;                // flush quick lists first
inline constexpr std::size_t kExactBins = 32;       // 16, 32, ..., 512 bytes
inline constexpr std::size_t kBinsPerDoubling = 4;  // above 512: 4 bins per power of two
inline constexpr std::size_t kLargestLog = 47;      // up to 2^48 bytes, then one catch-all bin
inline constexpr std::size_t kNumBins = kExactBins + (kLargestLog - 9 + 1) * kBinsPerDoubling + 1;

// The smallest bin whose size bound covers `size`.
constexpr std::size_t size_class(std::size_t size) noexcept {
  if (size <= 16) return 0;
  if (size <= 512) return (size - 1) / 16;
  const auto log = static_cast<std::size_t>(std::bit_width(size - 1) - 1);  // 2^log < size <= 2^(log+1)
  if (log > kLargestLog) return kNumBins - 1;
  const std::size_t step = std::size_t{1} << (log - 2);
  const std::size_t sub = (size - 1 - (std::size_t{1} << log)) / step;  // 0..3
  return kExactBins + (log - 9) * kBinsPerDoubling + sub;
}

// A bin's size bound (the last bin takes everything larger).
constexpr std::size_t class_size(std::size_t size_class) noexcept {
  if (size_class < kExactBins) return 16 * (size_class + 1);
  if (size_class >= kNumBins - 1) return SIZE_MAX;
  const std::size_t log = 9 + (size_class - kExactBins) / kBinsPerDoubling;
  const std::size_t sub = (size_class - kExactBins) % kBinsPerDoubling;
  return (std::size_t{1} << log) + (sub + 1) * (std::size_t{1} << (log - 2));
}

}  // namespace lea

// The chain, from what the user calls down to where memory comes from.
using LeaHeapChain =
    SelectMmapHeap<lea::kMmapThreshold,          // >= 128 KiB: a mapping of its own
      ThresholdHeap<lea::kQuickMax,              // <= 64 B: exact-size quick lists,
                    lea::kConsolidateRequest,    //   flushed before requests >= 512 B
        CoalesceHeap<                            // split on malloc, merge neighbours on free
          SegHeap<lea::kNumBins,                 // approximate best fit: first fitting bin
                  lea::size_class,               //   size -> bin
                  lea::class_size,               //   bin -> size bound
                  AdaptHeap<DLList, NullHeap>,   //   each bin: FIFO doubly linked free chunks
                  CoalesceableHeap<              //   no fit: a new boundary-tagged chunk
                    SbrkHeap<>>>>>,              //     from the process break
      MmapHeap>;                                 // where the large ones are mapped

class LeaHeap : public LeaHeapChain {};

}  // namespace strata::layers
