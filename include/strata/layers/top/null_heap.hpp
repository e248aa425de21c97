// NullHeap — top heap with no memory: malloc always returns nullptr, free does
// nothing. The parent of bins that must report "empty" instead of fetching memory
// (AdaptHeap<DLList, NullHeap> inside SegHeap: an empty bin sends the search on to
// the next bin). It leaves errno alone: "empty" is not "out of memory".
#pragma once
#include <cstddef>

namespace strata::layers {

class NullHeap {
 public:
  void* malloc(std::size_t) noexcept { return nullptr; }
  // The memory of a freed object belongs to whoever carved it, not to this heap.
  void free(void*) noexcept {}
};

}  // namespace strata::layers
