// ThresholdHeap — LeaHeap's small-object front (the paper's §6.2 ThresholdHeap
// with the quick lists inside): chunks of at most QuickMax bytes are recycled
// through exact-size LIFO quick lists (one SLList per 16-byte size) instead of
// being coalesced, and the quick lists are handed back to the coalescing heap
// ("consolidated", as dlmalloc's malloc_consolidate does) when a request of
// ConsolidateRequest bytes or more arrives, when a small request misses its
// list while the lists hold kConsolidateHeldBytes or more, or when Super runs
// out of memory. The second rule is dlmalloc's bound on its fast bins (it
// consolidates before extending the heap): without it, chunks of sizes the
// program has stopped asking for stay stranded on their lists while Super takes
// fresh memory for the sizes it now wants, and a program whose small sizes
// drift (bignums, strings) grows without bound.
//
// Super is the medium heap: a CoalesceHeap chain (getSize is the chunk size).
// Quick-list chunks stay "in use" as far as Super knows, so they are never merged
// while cached. malloc(sz <= QuickMax) pops the list of the smallest size >= sz;
// free files a chunk by its exact size (sizes above QuickMax go to Super).
//
// Limits: cached chunks are held until the next consolidation (at most about
// kConsolidateHeldBytes once a miss has been seen); nullptr from Super
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

  // Bytes the quick lists may hold before a miss consolidates them
  // (dlmalloc's FASTBIN_CONSOLIDATION_THRESHOLD).
  static constexpr std::size_t kConsolidateHeldBytes = std::size_t{64} << 10;

  void* malloc(std::size_t size) {
    if (size <= QuickMax) {
      const std::size_t list = list_for_request(size);
      if (void* ptr = quick_[list].get()) {
        held_bytes_ -= (list + 1) * kAlignment;
        return ptr;
      }
      if (held_bytes_ >= kConsolidateHeldBytes) consolidate();
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
    held_bytes_ += size;
    holding_ = true;
  }

  // Release everything: forget the cached chunks and clear Super.
  void clear()
    requires ClearableHeap<Super>
  {
    for (SLList& list : quick_) list = SLList{};
    holding_ = false;
    held_bytes_ = 0;
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
    held_bytes_ = 0;
  }

 private:
  static constexpr std::size_t kLists = QuickMax / kAlignment;
  static std::size_t list_for_request(std::size_t size) noexcept {
    return size <= kAlignment ? 0 : (size - 1) / kAlignment;
  }

  SLList quick_[kLists];
  bool holding_ = false;        // some quick list may be non-empty
  std::size_t held_bytes_ = 0;  // chunk bytes on the quick lists
};

}  // namespace strata::layers
