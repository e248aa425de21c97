// CoalesceHeap — splitting and immediate coalescing over boundary tags
// (CoalesceableHeap's representation, reached through Super, typically a SegHeap
// of DLList bins whose parent is the CoalesceableHeap).
//
// malloc(sz): rounds sz to 16 (at least 16), takes a chunk from Super, marks it in
// use, and if the chunk is at least 32 bytes too big, splits the tail off as a new
// free chunk and frees it to Super (into its bin).
// free(ptr): merges the chunk with its previous and next neighbours when they are
// free (taking them out of their bins with Super::remove first — hence DLList's
// O(1) removal), marks the result free and frees it to Super. Invariant: no two
// free chunks are ever adjacent. Fences (block ends) are never merged across.
//
// Limits: the caller must only free chunks this heap returned; chunks sitting in
// Super's bins must be exactly the free ones. nullptr from Super is passed on.
// free(nullptr) is a no-op.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/assert.hpp"
#include "strata/layers/heap.hpp"
#include "strata/layers/object_representation/coalesceable_heap.hpp"

namespace strata::layers {

template <CoalesceableRepresentation Super>
class CoalesceHeap : public Super {
 public:
  static constexpr std::size_t kHeaderSize = sizeof(ChunkHeader);
  static constexpr std::size_t kMinChunk = ChunkHeader::kMinChunkSize;

  void* malloc(std::size_t size) {
    if (size > SIZE_MAX - 4 * kHeaderSize) [[unlikely]] {
      errno = ENOMEM;
      return nullptr;
    }
    std::size_t chunk = align_up(size, kAlignment);
    if (chunk < kMinChunk) chunk = kMinChunk;
    void* ptr = Super::malloc(chunk);
    if (ptr == nullptr) return nullptr;
    Super::markInUse(ptr);
    split(ptr, chunk);
    return ptr;
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    STRATA_ASSERT(!Super::isFree(ptr) && !Super::isFence(ptr));  // a live chunk, freed once
    std::size_t size = Super::getSize(ptr);
    void* next = Super::getNext(ptr);
    if (Super::isPrevFree(ptr)) {
      void* prev = Super::getPrev(ptr);
      Super::remove(prev);
      size += Super::getSize(prev) + kHeaderSize;
      ptr = prev;
    }
    if (!Super::isFence(next) && Super::isFree(next)) {
      Super::remove(next);
      size += Super::getSize(next) + kHeaderSize;
    }
    Super::setSize(ptr, size);
    Super::markFree(ptr);
    // Coalesced: neither neighbour of the merged chunk is free.
    STRATA_ASSERT(!Super::isPrevFree(ptr));
    STRATA_ASSERT(Super::isFence(Super::getNext(ptr)) || !Super::isFree(Super::getNext(ptr)));
    Super::free(ptr);
  }

  // Objects here are not Super's objects as Super knows them: hide Super's
  // object-level extras rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

 private:
  // Cut `ptr` down to `size` and free the rest, if the rest can be a chunk.
  void split(void* ptr, std::size_t size) {
    const std::size_t actual = Super::getSize(ptr);
    if (actual - size < kHeaderSize + kMinChunk) return;
    Super::setSize(ptr, size);
    void* rest = Super::getNext(ptr);
    Super::makeChunk(rest, actual - size - kHeaderSize);
    Super::markFree(rest);
    Super::free(rest);
  }
};

}  // namespace strata::layers
