// SelectMmapHeap — LeaHeap's outermost layer (the paper's §6.2): requests of
// Threshold bytes or more get their own mapping from MmapSource; smaller ones go
// to SmallHeap (the base), and to a mapping too if SmallHeap is out of memory.
//
// Mapped objects carry a boundary-tag header (ChunkHeader, the representation of
// CoalesceableHeap) with the kMmapped bit, so free tells them apart from SmallHeap's
// chunks by looking at the header, and getSize reads the size from it.
// SmallHeap must therefore use the ChunkHeader representation (a CoalesceHeap chain).
//
// Limits: 16 bytes of header on top of MmapSource's own. free(nullptr) is a no-op;
// an overflowing size or a refused mapping is nullptr + ENOMEM.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/layers/heap.hpp"
#include "strata/layers/object_representation/coalesceable_heap.hpp"

namespace strata::layers {

template <std::size_t Threshold, Heap SmallHeap, Heap MmapSource>
class SelectMmapHeap : public SmallHeap {
 public:
  void* malloc(std::size_t size) {
    if (size < Threshold) {
      if (void* ptr = SmallHeap::malloc(size)) return ptr;
    }
    return map(size);
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    ChunkHeader* header = ChunkHeader::of(ptr);
    if (header->has(ChunkHeader::kMmapped))
      mmap_.free(header);
    else
      SmallHeap::free(ptr);
  }

  static std::size_t getSize(void* ptr) noexcept { return ChunkHeader::of(ptr)->size(); }

  // Mapped objects are not tracked, so there is no "release everything".
  void clear() = delete;
  // Objects here are not Super's objects as Super knows them: hide Super's
  // object-level extras rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

 private:
  void* map(std::size_t size) {
    if (size > SIZE_MAX - 2 * sizeof(ChunkHeader)) {
      errno = ENOMEM;
      return nullptr;
    }
    const std::size_t chunk = align_up(size, kAlignment);
    auto* header = static_cast<ChunkHeader*>(mmap_.malloc(chunk + sizeof(ChunkHeader)));
    if (header == nullptr) return nullptr;
    header->prev_size = 0;
    header->size_bits = chunk | ChunkHeader::kMmapped | ChunkHeader::kBlockStart;
    return header->object();
  }

  MmapSource mmap_;
};

}  // namespace strata::layers
