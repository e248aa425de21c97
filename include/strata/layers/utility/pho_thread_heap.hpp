// PHOThreadHeap — "private heaps with ownership": NumHeaps instances of Super;
// a thread allocates from the instance its thread id hashes to, and every
// object goes back to the instance that allocated it, whichever thread frees
// it. Ownership is recorded in a 16-byte header before each object (the owner
// index), which keeps kAlignment-aligned pointers kAlignment-aligned.
// getSize (when Super is sized) is the parent's size minus the header.
// Limits: several threads can share an instance and frees arrive from any
// thread, so Super must be thread safe (e.g. LockedHeap<…>); 16 bytes per object.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "strata/layers/heap.hpp"
#include "strata/layers/utility/thread_heap.hpp"

namespace strata::layers {

template <std::size_t NumHeaps, Heap Super>
class PHOThreadHeap {
  static_assert(NumHeaps > 0, "PHOThreadHeap needs at least one heap");

 public:
  void* malloc(std::size_t size) noexcept {
    if (size > SIZE_MAX - sizeof(Header)) return nullptr;
    const std::size_t owner = heapIndex();
    void* block = heaps_[owner].heap.malloc(size + sizeof(Header));
    if (!block) return nullptr;
    Header* header = static_cast<Header*>(block);
    header->owner = owner;
    return header + 1;
  }

  void free(void* ptr) noexcept {
    if (!ptr) return;
    Header* header = header_of(ptr);
    heaps_[header->owner].heap.free(header);
  }

  std::size_t getSize(void* ptr) noexcept
    requires SizedHeap<Super>
  {
    Header* header = header_of(ptr);
    return heaps_[header->owner].heap.getSize(header) - sizeof(Header);
  }

  // Which instance owns ptr (for inspection and tests).
  static std::size_t ownerOf(void* ptr) noexcept { return header_of(ptr)->owner; }
  static std::size_t heapIndex() noexcept { return detail::thread_slot(NumHeaps); }
  Super& getHeap(std::size_t index) noexcept { return heaps_[index].heap; }

 private:
  struct alignas(kAlignment) Header {
    std::size_t owner;
  };
  static_assert(sizeof(Header) == kAlignment);

  struct alignas(detail::kCacheLine) Slot {
    Super heap;
  };
  static Header* header_of(void* ptr) noexcept { return static_cast<Header*>(ptr) - 1; }

  std::array<Slot, NumHeaps> heaps_{};
};

}  // namespace strata::layers
