// ThrowExceptionHeap — turns out of memory into an exception: malloc throws
// std::bad_alloc when the parent returns nullptr, for C++ code that wants
// operator-new semantics from a layer chain. The one layer that does not
// return nullptr on failure — that is its purpose; do not put it under
// ANSIWrapper or inside a C malloc replacement. Everything else is the parent's.
#pragma once
#include <cstddef>
#include <new>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <Heap Super>
class ThrowExceptionHeap : public Super {
 public:
  using Super::Super;

  void* malloc(std::size_t size) {
    void* ptr = Super::malloc(size);
    if (!ptr) throw std::bad_alloc();
    return ptr;
  }
};

}  // namespace strata::layers
