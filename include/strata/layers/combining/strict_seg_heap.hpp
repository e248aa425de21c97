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
// share one object representation, e.g. both SizeHeap<...>); a big size goes to
// BigHeap, otherwise the object is filed under the largest class whose ClassMaxSize
// does not exceed its size (the paper's downward correction loop; for an object
// that came from bin c the size is exactly ClassMaxSize(c) and the loop stops at
// once). "Strict": a bin never borrows from another bin, and when a bin's heap
// returns nullptr malloc returns nullptr. free(nullptr) is a no-op.
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
    while (ClassMaxSize(size_class) > size && size_class > 0) --size_class;
    little_[size_class].free(ptr);
  }

  LittleHeap& bin(std::size_t size_class) noexcept { return little_[size_class]; }

 private:
  LittleHeap little_[NumBins];
};

}  // namespace strata::layers
