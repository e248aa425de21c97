// KingsleyHeap — the paper's §6.1: a power-of-two segregated-fits allocator (after
// Chris Kingsley's BSD malloc), fast and free of coalescing, at the price of up to
// 2x internal fragmentation plus a 16-byte header.
//
// The exact policy (the hand-written clone in bench/layers must match it):
//   * size classes: class c serves sizes up to 16 << c (16, 32, 64, ... 1 GiB:
//     27 classes); a request of n bytes (n = 0 counts as 1) gets class
//     c = n <= 16 ? 0 : bit_width(n - 1) - 4, and is given exactly 16 << c bytes.
//   * every object has a 16-byte header just before it; its last 8 bytes hold the
//     object's size (the class size for small objects); it is written on every malloc.
//   * each class keeps a LIFO singly linked free list threaded through the freed
//     blocks (the link is in the first 8 bytes of the header); malloc pops it;
//     when empty, a fresh block of 16 + (16 << c) bytes is bumped from the process
//     break (SbrkHeap: one 16 GiB reservation, committed 64 KiB at a time).
//   * free reads the size from the header (always a class size for small blocks),
//     recomputes the class from it and pushes the block on that class's list.
//     Small blocks never go back to the break and never change class.
//   * requests above 1 GiB: mmap (SizeHeap header + MmapHeap's own 16-byte header),
//     unmapped on free.
//   * every returned pointer is 16-byte aligned. Not thread-safe (wrap it in a lock).
//   * free(nullptr) is a no-op; out of memory is nullptr + ENOMEM.
#pragma once
#include <bit>
#include <cstddef>

#include "strata/layers/building_blocks/freelist_heap.hpp"
#include "strata/layers/combining/strict_seg_heap.hpp"
#include "strata/layers/object_representation/size_heap.hpp"
#include "strata/layers/top/mmap_heap.hpp"
#include "strata/layers/top/sbrk_heap.hpp"

namespace strata::layers {

namespace kingsley {

inline constexpr std::size_t kMinClassSize = 16;  // class 0; keeps 16-byte alignment
inline constexpr std::size_t kNumBins = 27;       // 16 B << 26 = 1 GiB, the largest class

// The smallest class whose size is at least `size` (0 and 1..16 are class 0).
constexpr std::size_t size_class(std::size_t size) noexcept {
  return size <= kMinClassSize ? 0 : static_cast<std::size_t>(std::bit_width(size - 1) - 4);
}

// The size every object of class c has.
constexpr std::size_t class_size(std::size_t size_class) noexcept {
  return kMinClassSize << size_class;
}

}  // namespace kingsley

// The chain, from what the user calls down to where memory comes from.
using KingsleyHeapChain =
    StrictSegHeap<kingsley::kNumBins,       // power-of-two bins, 16 B .. 1 GiB
                  kingsley::size_class,     //   request size -> class
                  kingsley::class_size,     //   class -> the size given out
                  SizeHeap<                 // each bin: 16-byte header with the size
                      FreelistHeap<         //   LIFO list of the bin's freed blocks
                          SbrkHeap<>>>,     //   fresh blocks from the process break
                  SizeHeap<                 // beyond 1 GiB: the same header
                      MmapHeap>>;           //   in its own mapping, unmapped on free

class KingsleyHeap : public KingsleyHeapChain {};

}  // namespace strata::layers
