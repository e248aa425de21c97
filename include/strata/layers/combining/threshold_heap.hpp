// ThresholdHeap — LeaHeap's small-object front (the paper's §6.2 ThresholdHeap
// with the quick lists inside): chunks of at most QuickMax bytes are recycled
// through exact-size LIFO quick lists (one SLList per 16-byte size) instead of
// being coalesced, and the quick lists are handed back to the coalescing heap
// ("consolidated", as dlmalloc's malloc_consolidate does) when a request of
// ConsolidateRequest bytes or more arrives, or when Super runs out of memory.
//
// Super is the medium heap: a CoalesceHeap chain (getSize is the chunk size).
// Quick-list chunks stay "in use" as far as Super knows, so they are never merged
// while cached. malloc(sz <= QuickMax) pops the list of the smallest size >= sz;
// free files a chunk by its exact size (sizes above QuickMax go to Super).
//
// Limits: cached chunks are held until the next consolidation; nullptr from Super
// (after one consolidation and retry) is passed on. free(nullptr) is a no-op.
#pragma once
#include <cstddef>

#include "strata/layers/building_blocks/sl_list.hpp"
#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t QuickMax, std::size_t ConsolidateRequest, SizedHeap Super>
class ThresholdHeap : public Super {
  static_assert(QuickMax % kAlignment == 0 && QuickMax > 0, "QuickMax must be a multiple of 16");
  static_assert(ConsolidateRequest > QuickMax, "consolidation is for requests above the quick lists");

 public:
  ThresholdHeap() = default;
  ThresholdHeap(const ThresholdHeap&) = delete;
  ThresholdHeap& operator=(const ThresholdHeap&) = delete;
  ~ThresholdHeap() { consolidate(); }

  void* malloc(std::size_t size) {
    if (size <= QuickMax) {
      if (void* ptr = quick_[list_for_request(size)].get()) return ptr;
    } else if (size >= ConsolidateRequest && holding_) {
      consolidate();
    }
    void* ptr = Super::malloc(size);
    if (ptr == nullptr && holding_) {
      consolidate();
      ptr = Super::malloc(size);
    }
    return ptr;
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    const std::size_t size = Super::getSize(ptr);
    if (size > QuickMax) {
      Super::free(ptr);
      return;
    }
    quick_[size / kAlignment - 1].insert(ptr);
    holding_ = true;
  }

  // Release everything: forget the cached chunks and clear Super.
  void clear()
    requires ClearableHeap<Super>
  {
    for (SLList& list : quick_) list = SLList{};
    holding_ = false;
    Super::clear();
  }

  // Objects here are not Super's objects as Super knows them: hide Super's
  // object-level extras rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

  // Hand every cached chunk back to Super (where it is coalesced).
  void consolidate() {
    for (SLList& list : quick_)
      while (void* ptr = list.get()) Super::free(ptr);
    holding_ = false;
  }

 private:
  static constexpr std::size_t kLists = QuickMax / kAlignment;
  static std::size_t list_for_request(std::size_t size) noexcept {
    return size <= kAlignment ? 0 : (size - 1) / kAlignment;
  }

  SLList quick_[kLists];
  bool holding_ = false;  // some quick list may be non-empty
};

}  // namespace strata::layers
