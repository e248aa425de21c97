// HybridHeap — one heap for small objects, another for big ones: requests of at
// most BigSize bytes go to SmallHeap (the base), larger ones to BigHeap (a member).
//
// free(ptr) routes by SmallHeap::getSize(ptr): at most BigSize means small. So the
// two heaps must share one object representation (e.g. both SizeHeap<...>), and
// SmallHeap's getSize of a small object must not exceed BigSize — pick BigSize on a
// size-class boundary of SmallHeap (e.g. a power of two under KingsleyHeap).
// getSize is SmallHeap's. free(nullptr) is a no-op; nullptr from either heap is
// passed on.
#pragma once
#include <cstddef>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t BigSize, SizedHeap SmallHeap, Heap BigHeap>
class HybridHeap : public SmallHeap {
 public:
  void* malloc(std::size_t size) {
    if (size <= BigSize) return SmallHeap::malloc(size);
    return big_.malloc(size);
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    if (SmallHeap::getSize(ptr) <= BigSize)
      SmallHeap::free(ptr);
    else
      big_.free(ptr);
  }

  BigHeap& big() noexcept { return big_; }

  void clear()
    requires ClearableHeap<SmallHeap> && ClearableHeap<BigHeap>
  {
    SmallHeap::clear();
    big_.clear();
  }

  // Objects here are not Super's objects as Super knows them: hide Super's
  // object-level extras rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

 private:
  BigHeap big_;
};

}  // namespace strata::layers
