// MmapHeap — top heap: every object is its own private anonymous mapping of fresh,
// zeroed pages (platform::map_pages); free unmaps it at once.
//
// Size recovery: a 16-byte header in front of each object records the mapping's
// length. Chosen over a size map because it needs no allocation, no lock and no
// lookup on free; the cost is 16 bytes per object, and objects are 16-byte aligned,
// not page aligned.
//
// Limits: every malloc is a system call and at least one page — meant for large
// objects. Out of memory (or a size that would overflow) is nullptr + ENOMEM.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/layers/heap.hpp"
#include "strata/platform.hpp"

namespace strata::layers {

class MmapHeap {
 public:
  static constexpr std::size_t kHeaderSize = kAlignment;

  // Out of line: a system call anyway; keeps callers' fast paths small.
  [[gnu::noinline]] void* malloc(std::size_t size) noexcept {
    const std::size_t page = platform::page_size();
    if (size > SIZE_MAX - kHeaderSize - page) {
      errno = ENOMEM;
      return nullptr;
    }
    const std::size_t length = align_up(size + kHeaderSize, page);
    void* mapping = platform::map_pages(length);
    if (mapping == nullptr) return nullptr;
    *static_cast<std::size_t*>(mapping) = length;
    return static_cast<char*>(mapping) + kHeaderSize;
  }

  [[gnu::noinline]] void free(void* ptr) noexcept {
    if (ptr == nullptr) return;
    char* mapping = static_cast<char*>(ptr) - kHeaderSize;
    platform::unmap_pages(mapping, *reinterpret_cast<std::size_t*>(mapping));
  }

  // Usable bytes: the rest of the mapping after the header.
  static std::size_t getSize(void* ptr) noexcept {
    return *reinterpret_cast<std::size_t*>(static_cast<char*>(ptr) - kHeaderSize) - kHeaderSize;
  }
};

}  // namespace strata::layers
