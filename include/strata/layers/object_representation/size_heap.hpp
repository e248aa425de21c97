// SizeHeap — records each object's size in a header just before the object, so
// getSize(ptr) works for any Super.
//
// The header is 16 bytes (kAlignment) so that a 16-byte aligned block from Super
// gives a 16-byte aligned object; the size sits in its last 8 bytes, immediately
// before the object, and the first 8 bytes are unused (a FreelistHeap below uses
// them as its link while the block is free). The recorded size is the size asked
// of this layer (StrictSegHeap asks for the class size, so that is what it reads
// back). The header is written on every malloc.
//
// Limits: 16 bytes per object. A request within 16 bytes of SIZE_MAX fails with
// nullptr + ENOMEM; nullptr from Super is passed on; free(nullptr) is a no-op.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <Heap Super>
class SizeHeap : public Super {
 public:
  static constexpr std::size_t kHeaderSize = kAlignment;

  void* malloc(std::size_t size) {
    if (size > SIZE_MAX - kHeaderSize) [[unlikely]] {
      errno = ENOMEM;
      return nullptr;
    }
    char* block = static_cast<char*>(Super::malloc(size + kHeaderSize));
    if (block == nullptr) [[unlikely]]
      return nullptr;
    char* object = block + kHeaderSize;
    size_slot(object) = size;
    return object;
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    char* block = static_cast<char*>(ptr) - kHeaderSize;
    // A header precedes every object, so the block is never null: saying so lets
    // the compiler drop the null check of every layer below (zero-cost chains).
    if (block == nullptr) __builtin_unreachable();
    Super::free(block);
  }

  static std::size_t getSize(void* ptr) noexcept { return size_slot(ptr); }

  // Objects here are not Super's objects as Super knows them: hide Super's
  // object-level extras rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

 private:
  static std::size_t& size_slot(void* object) noexcept {
    return *reinterpret_cast<std::size_t*>(static_cast<char*>(object) - sizeof(std::size_t));
  }
};

}  // namespace strata::layers
