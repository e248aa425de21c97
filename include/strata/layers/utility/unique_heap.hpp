// UniqueHeap — a heap type that refers to one heap object: every UniqueHeap<X>
// (however many are constructed, wherever) forwards to a single static X, so
// small handle objects can share one heap without passing references around.
// A different Tag gives a different shared instance of the same X.
// Limits: the shared X is used by every thread that uses any handle, so it
// must be thread safe if they are on several threads; it is created on first
// use and never destroyed (see detail/static_instance.hpp).
#pragma once
#include <cstddef>

#include "strata/layers/heap.hpp"
#include "strata/layers/utility/detail/capabilities.hpp"
#include "strata/layers/utility/detail/static_instance.hpp"

namespace strata::layers {

template <Heap Super, class Tag = void>
class UniqueHeap {
 public:
  void* malloc(std::size_t size) noexcept { return instance().malloc(size); }
  void free(void* ptr) noexcept { instance().free(ptr); }

  std::size_t getSize(void* ptr) noexcept
    requires SizedHeap<Super>
  {
    return instance().getSize(ptr);
  }
  void* realloc(void* ptr, std::size_t size) noexcept
    requires ReallocatingHeap<Super>
  {
    return instance().realloc(ptr, size);
  }
  void clear() noexcept
    requires ClearableHeap<Super>
  {
    instance().clear();
  }

  // The shared instance.
  static Super& instance() noexcept { return detail::static_instance<Super, UniqueHeap>(); }
};

}  // namespace strata::layers
