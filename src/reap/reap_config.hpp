// The reap's tunables, all in one place.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::reap_detail {

// Chunks come from the system at least this large and double with each new
// chunk, up to kMaxChunkBytes (bigger chunks cost only address space: the
// kernel commits pages as they are touched).
inline constexpr std::size_t kFirstChunkBytes = 8 * 1024;
inline constexpr std::size_t kMaxChunkBytes = std::size_t{64} << 20;

// Mappings of up to kMaxCachedMapping bytes that reaps give back are kept, at
// most kCachedMappings of them process-wide, for the next reap (a reap per
// request then costs no system call).
inline constexpr std::size_t kMaxCachedMapping = 256 * 1024;
inline constexpr std::size_t kCachedMappings = 32;

// Chunks are cut into slabs. A slab that begins a run of objects starts with a
// SlabHeader; every object pointer p finds it at (p - 1) rounded down to
// kSlabBytes. This is what lets small objects go without a header.
inline constexpr std::size_t kSlabBytes = 4096;
inline constexpr std::size_t kSlabHeaderBytes = 64;  // also aligns slab objects to 64
inline constexpr std::size_t kSlabPayload = kSlabBytes - kSlabHeaderBytes;

// Small size classes: 16-byte steps up to kMaxStepSize, then three classes that
// pack 3, 2 and 1 objects into a slab. Above kMaxSmallSize an object is large.
inline constexpr std::size_t kGranule = 16;
inline constexpr std::size_t kMaxStepSize = 1024;
inline constexpr std::size_t kStepClasses = kMaxStepSize / kGranule;  // 64
inline constexpr std::size_t kPackedSizes[] = {kSlabPayload / 3 / kGranule * kGranule,
                                               kSlabPayload / 2 / kGranule * kGranule,
                                               kSlabPayload};
inline constexpr std::size_t kSizeClasses = kStepClasses + 3;
inline constexpr std::size_t kMaxSmallSize = kSlabPayload;

// Large objects of up to this many slabs come from the chunks (and their
// memory returns to per-length free lists); bigger ones get their own mapping,
// returned to the system on free.
inline constexpr std::size_t kMaxSpanSlabs = 16;

// Alignments up to this come from the slab layout for free; larger ones are
// placed in a large object.
inline constexpr std::size_t kSlabAlignment = kSlabHeaderBytes;

}  // namespace strata::reap_detail
