// Vam's design decisions (Vam 2005 §4.3, Table 2, Fig. 5), each composed from
// the layers so that one decision differs between two heaps and nothing else:
//
//   VamLayers        small objects (<= 256 B) headerless in per-class areas
//                    (AreaSegHeap, BIBOP), classes every 16 B, reap-like
//                    allocation (bump through 8 KiB page blocks, then reuse the
//                    class's freed objects: FreelistHeap<ChunkHeap<...>>)
//   VamSmallHeader   the same with a 16-byte header on every small object
//                    (SizeHeap; Vam_small+header's is 8 bytes: our alignment is 16)
//   VamCoarse        the same with power-of-two classes 16..256 B (PHKmalloc's
//                    granularity; the opposite of PHK_sc)
//
// Objects above 256 B go to LeaHeap in all three (headers and coalescing, as
// Vam's medium objects have). Vam_bitmap (bitmaps instead of reap allocation)
// has no counterpart: the layers have no bitmap heap.
#pragma once
#include <bit>
#include <cstddef>

#include "strata/layers.hpp"

namespace strata::layers::vam {

inline constexpr std::size_t kSmallMax = 256;
inline constexpr std::size_t kPageBlock = 8192;

// Fine classes: every 16 bytes up to 256 (16 bins); above: no bin.
constexpr std::size_t fine_class(std::size_t size) noexcept { return size == 0 ? 0 : (size - 1) / 16; }
constexpr std::size_t fine_size(std::size_t size_class) noexcept { return (size_class + 1) * 16; }
inline constexpr std::size_t kFineBins = kSmallMax / 16;

// Coarse classes: powers of two 16, 32, ... 256 (5 bins).
constexpr std::size_t coarse_class(std::size_t size) noexcept {
  return size <= 16 ? 0 : static_cast<std::size_t>(std::bit_width(size - 1)) - 4;
}
constexpr std::size_t coarse_size(std::size_t size_class) noexcept { return std::size_t{16} << size_class; }
inline constexpr std::size_t kCoarseBins = 5;

// One bin's chain: reap-like allocation in page blocks of its own area.
template <class Area>
using ReapBin = FreelistHeap<ChunkHeap<kPageBlock, Area>>;
// The same with a size header on every object.
template <class Area>
using ReapBinWithHeader = SizeHeap<FreelistHeap<ChunkHeap<kPageBlock, Area>>>;

}  // namespace strata::layers::vam

namespace strata::layers {

class VamLayers : public AreaSegHeap<vam::kFineBins, vam::fine_class, vam::fine_size, vam::ReapBin, LeaHeap> {};
class VamSmallHeader
    : public AreaSegHeap<vam::kFineBins, vam::fine_class, vam::fine_size, vam::ReapBinWithHeader, LeaHeap> {};
class VamCoarse
    : public AreaSegHeap<vam::kCoarseBins, vam::coarse_class, vam::coarse_size, vam::ReapBin, LeaHeap> {};

}  // namespace strata::layers
