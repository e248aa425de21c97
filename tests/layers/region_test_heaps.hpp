// Shared by the region layer tests (test_region_*, test_clear_optimized_heap):
// the region layers keep memory hidden from ASan/Valgrind until their owner
// hands an object out (strata reaps do); for the tests this adapter is the owner.
#pragma once
#include <cstddef>

#include "strata/layers/region.hpp"

namespace strata::test {

template <class H>
struct RegionOwner {
  H& heap;
  void* malloc(std::size_t size) {
    void* p = heap.malloc(size);
    if (p != nullptr) strata::layers::instrument::expose(p, heap.getSize(p));
    return p;
  }
  void free(void* p) {
    if (p == nullptr) return;
    strata::layers::instrument::hide(p, heap.getSize(p));
    heap.free(p);
  }
  std::size_t getSize(void* p) { return heap.getSize(p); }
};

}  // namespace strata::test
