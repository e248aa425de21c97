// MallocHeap — top heap: memory from the C library's malloc.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <malloc.h>

namespace strata::layers {

class MallocHeap {
 public:
  void* malloc(std::size_t size) noexcept { return std::malloc(size); }
  void free(void* ptr) noexcept { std::free(ptr); }
  std::size_t getSize(void* ptr) noexcept { return ::malloc_usable_size(ptr); }
};

}  // namespace strata::layers
