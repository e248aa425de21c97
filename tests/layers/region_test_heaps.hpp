// Shared by the region layer tests (test_region_*, test_clear_optimized_heap):
// the region layers keep memory hidden from ASan/Valgrind until their owner
// hands an object out (strata reaps do); for the tests this adapter is the owner.
#pragma once
#include <cstddef>

#include "strata/layers/region.hpp"

namespace strata::test {

// A layer with an instrumented mode (ClearOptimizedHeap) is used in it: the
// links it keeps in freed objects are then written through expose/hide.
template <class H>
struct RegionOwner {
  static constexpr bool kInstrumentedMode = requires(H h, void* p) { h.template free<true>(p); };
  H& heap;
  void* malloc(std::size_t size) {
    void* p;
    if constexpr (kInstrumentedMode) p = heap.template malloc<true>(size);
    else p = heap.malloc(size);
    if (p != nullptr) strata::layers::instrument::expose(p, heap.getSize(p));
    return p;
  }
  void free(void* p) {
    if (p == nullptr) return;
    strata::layers::instrument::hide(p, heap.getSize(p));
    if constexpr (kInstrumentedMode) heap.template free<true>(p);
    else heap.free(p);
  }
  std::size_t getSize(void* p) { return heap.getSize(p); }
};

}  // namespace strata::test
