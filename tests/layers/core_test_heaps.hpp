// Test-only top heaps for the layer tests of layers-core.
//
// FailingHeap: memory from the C library (16-byte aligned), failing on demand.
// Its switch and counters are shared by every instance (StrictSegHeap and SegHeap
// hold one parent per bin, and all of them must obey one switch), so each test
// calls FaultControl::reset() first.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "strata/layers/heap.hpp"

namespace strata::test {

struct FaultControl {
  static inline std::size_t allowed = SIZE_MAX;  // mallocs that may still succeed
  static inline std::size_t mallocs = 0;         // successful mallocs
  static inline std::size_t frees = 0;           // non-null frees
  static inline std::size_t last_request = 0;    // size of the last malloc request
  static inline void* last_freed = nullptr;

  static void reset() {
    allowed = SIZE_MAX;
    mallocs = frees = last_request = 0;
    last_freed = nullptr;
  }
  static void fail_from_now() { allowed = 0; }
  static void fail_after(std::size_t successes) { allowed = successes; }
  static std::size_t live() { return mallocs - frees; }
};

class FailingHeap {
 public:
  void* malloc(std::size_t size) {
    FaultControl::last_request = size;
    if (FaultControl::allowed == 0) {
      errno = ENOMEM;
      return nullptr;
    }
    if (FaultControl::allowed != SIZE_MAX) --FaultControl::allowed;
    void* p = std::aligned_alloc(strata::layers::kAlignment,
                                 strata::layers::align_up(size == 0 ? 1 : size, strata::layers::kAlignment));
    if (p != nullptr) ++FaultControl::mallocs;
    return p;
  }
  void free(void* ptr) {
    if (ptr == nullptr) return;
    ++FaultControl::frees;
    FaultControl::last_freed = ptr;
    std::free(ptr);
  }
};

// ArenaHeap: bumps blocks (16-byte aligned, contiguous) out of a private arena of
// Bytes bytes, obeying FaultControl like FailingHeap; free is a no-op. The arena
// is released with the heap. For tests that need neighbouring blocks.
template <std::size_t Bytes>
class ArenaHeap {
 public:
  ArenaHeap() : base_(static_cast<char*>(std::aligned_alloc(strata::layers::kAlignment, Bytes))), cursor_(base_) {}
  ArenaHeap(const ArenaHeap&) = delete;
  ArenaHeap& operator=(const ArenaHeap&) = delete;
  ~ArenaHeap() { std::free(base_); }

  void* malloc(std::size_t size) {
    FaultControl::last_request = size;
    const std::size_t bytes = strata::layers::align_up(size == 0 ? 1 : size, strata::layers::kAlignment);
    if (FaultControl::allowed == 0 || bytes > static_cast<std::size_t>(base_ + Bytes - cursor_)) {
      errno = ENOMEM;
      return nullptr;
    }
    if (FaultControl::allowed != SIZE_MAX) --FaultControl::allowed;
    ++FaultControl::mallocs;
    char* p = cursor_;
    cursor_ += bytes;
    return p;
  }
  void free(void*) {}

  char* arena_base() const { return base_; }
  std::size_t arena_used() const { return static_cast<std::size_t>(cursor_ - base_); }

 private:
  char* base_;
  char* cursor_;
};

}  // namespace strata::test
