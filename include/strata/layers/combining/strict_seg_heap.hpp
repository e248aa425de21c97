// StrictSegHeap — strict segregated fits (the paper's Figure 5).
//
// Template parameters:
//   NumBins       number of size classes (bins) handled by the little heaps
//   SizeClass     size -> class index; classes at or beyond NumBins are "big"
//   ClassMaxSize  class index -> the largest size that class serves
//   LittleHeap    the heap type of each bin (one instance per bin)
//   BigHeap       the parent: serves big requests and supplies getSize
//
// malloc(sz): class c = SizeClass(sz); c >= NumBins goes to BigHeap, else bin c is
// asked for exactly ClassMaxSize(c) bytes (so every object of a bin has one size).
// free(p): size = getSize(p) (from BigHeap: the little heaps and the big heap must
// share one object representation that records the size asked of it exactly, e.g.
// both SizeHeap<...>); a big size goes to BigHeap, otherwise the object returns to
// bin SizeClass(size): an object of bin c records exactly ClassMaxSize(c), so no
// downward correction is needed (unlike SegHeap, whose bins also take objects
// that came from the big heap). "Strict": a bin never borrows from another bin,
// and when a bin's heap returns nullptr malloc returns nullptr.
// free(nullptr) is a no-op. clear() exists when every heap below is clearable.
#pragma once
#include <cstddef>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t NumBins, std::size_t (*SizeClass)(std::size_t),
          std::size_t (*ClassMaxSize)(std::size_t), Heap LittleHeap, SizedHeap BigHeap>
class StrictSegHeap : public BigHeap {
  static_assert(NumBins > 0, "StrictSegHeap needs at least one bin");

 public:
  void* malloc(std::size_t size) {
    const std::size_t size_class = SizeClass(size);
    if (size_class >= NumBins) return BigHeap::malloc(size);
    return little_[size_class].malloc(ClassMaxSize(size_class));
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    const std::size_t size = BigHeap::getSize(ptr);
    std::size_t size_class = SizeClass(size);
    if (size_class >= NumBins) {
      BigHeap::free(ptr);
      return;
    }
    // Strict bins hand out exactly ClassMaxSize(c) bytes, so an object's recorded
    // size maps straight back to its bin: no downward correction (SegHeap needs
    // one, for big-heap objects filed into bins).
    little_[size_class].free(ptr);
  }

  LittleHeap& bin(std::size_t size_class) noexcept { return little_[size_class]; }

  // Release everything, bins and big heap alike.
  void clear()
    requires ClearableHeap<LittleHeap> && ClearableHeap<BigHeap>
  {
    for (LittleHeap& little : little_) little.clear();
    BigHeap::clear();
  }

  // Objects here are not Super's objects as Super knows them: hide Super's
  // object-level extras rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

 private:
  LittleHeap little_[NumBins];
};

}  // namespace strata::layers
