// Optional heap operations beyond the Heap concept. Wrapping layers (LockedHeap,
// ANSIWrapper, TraceHeap …) use these to forward exactly what their parent
// offers, so a wrapper never exposes an unwrapped parent operation.
#pragma once
#include <concepts>
#include <cstddef>

namespace strata::layers {

template <class H>
concept ReallocatingHeap = requires(H heap, void* ptr, std::size_t size) {
  { heap.realloc(ptr, size) } -> std::same_as<void*>;
};

template <class H>
concept CallocatingHeap = requires(H heap, std::size_t count, std::size_t size) {
  { heap.calloc(count, size) } -> std::same_as<void*>;
};

template <class H>
concept AligningHeap = requires(H heap, std::size_t alignment, std::size_t size) {
  { heap.memalign(alignment, size) } -> std::same_as<void*>;
};

}  // namespace strata::layers
