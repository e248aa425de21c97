// ObstackHeap — stack discipline in the manner of GNU obstacks (the paper's
// §5.2, gcc): objects are bumped out of chunks of ChunkSize bytes taken from
// Super; freeing an object frees it and every object allocated after it.
// The newest object can be built incrementally before its size is known:
//
//   grow(n)            extend the growing object by n uninitialised bytes
//   append(data, n)    extend it by n bytes copied from data
//   base(), objectSize()  where it is now and how long (base() moves when a
//                      grow needs a new chunk: the object is copied there)
//   finish()           end it and return its address; the next object starts
//                      at the next kAlignment boundary
//   malloc(n)          grow(n) + finish() (so, like obstack_alloc, it completes
//                      any object still growing as part of this one)
//   free(p)            free p, everything allocated after p and the growing
//                      object; chunks above p go back to Super
//   clear()            free everything (GNU's obstack_free(h, NULL))
//
// Every object is kAlignment-aligned provided Super's blocks are. Out of memory:
// malloc and finish return nullptr, grow/append return false, and the growing
// object is left as it was. free of a pointer outside every chunk prints the
// address on stderr and aborts. free(nullptr) is a no-op.
// Limits: no getSize (objects carry no header); one growing object at a time;
// not thread safe.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t ChunkSize, Heap Super>
class ObstackHeap : public Super {
  struct alignas(kAlignment) Chunk {
    Chunk* prev;  // the chunk allocated before this one
    char* limit;  // one past this chunk's last usable byte (kAlignment-aligned)
  };
  static_assert(sizeof(Chunk) == kAlignment);
  static_assert(ChunkSize % kAlignment == 0 && ChunkSize > sizeof(Chunk),
                "ObstackHeap: ChunkSize must be a multiple of kAlignment larger than a chunk header");

 public:
  using Super::Super;
  ObstackHeap() = default;
  ObstackHeap(const ObstackHeap&) = delete;
  ObstackHeap& operator=(const ObstackHeap&) = delete;
  ~ObstackHeap() { clear(); }

  bool grow(std::size_t n) noexcept {
    if (chunk_ && n <= static_cast<std::size_t>(limit_ - next_)) {
      next_ += n;
      return true;
    }
    return move_to_new_chunk(n);
  }

  bool append(const void* data, std::size_t n) noexcept {
    if (!grow(n)) return false;
    std::memcpy(next_ - n, data, n);
    return true;
  }

  void* base() const noexcept { return object_; }
  std::size_t objectSize() const noexcept { return static_cast<std::size_t>(next_ - object_); }

  void* finish() noexcept {
    if (!chunk_ && !grow(0)) return nullptr;
    char* finished = object_;
    next_ = reinterpret_cast<char*>(align_up(reinterpret_cast<std::uintptr_t>(next_), kAlignment));  // <= limit_: both aligned
    object_ = next_;
    return finished;
  }

  void* malloc(std::size_t size) noexcept { return grow(size) ? finish() : nullptr; }

  void free(void* ptr) noexcept {
    if (!ptr) return;
    char* p = static_cast<char*>(ptr);
    Chunk* holder = chunk_;
    while (holder && !(p >= data(holder) && p <= holder->limit)) holder = holder->prev;
    if (!holder) {
      std::fprintf(stderr, "strata ObstackHeap: free of pointer %p not in this obstack\n", ptr);
      std::fflush(stderr);
      std::abort();
    }
    while (chunk_ != holder) pop_chunk();
    object_ = next_ = p;
    limit_ = holder->limit;
  }

  void clear() noexcept {
    while (chunk_) pop_chunk();
    object_ = next_ = limit_ = nullptr;
  }

  // The parent's other whole-object operations do not understand this layer's
  // objects: hide them rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;
  std::size_t getSize(void*) = delete;  // objects carry no size

 private:
  static char* data(Chunk* chunk) noexcept { return reinterpret_cast<char*>(chunk + 1); }

  void pop_chunk() noexcept {
    Chunk* prev = chunk_->prev;
    Super::free(chunk_);
    chunk_ = prev;
  }

  // The growing object does not fit: copy it, n bytes longer, into a new chunk
  // with room to spare (a quarter more), so repeated grows stay amortised O(1).
  bool move_to_new_chunk(std::size_t n) noexcept {
    const std::size_t current = objectSize();
    // Objects up to a quarter of the address space: the slack below cannot overflow.
    constexpr std::size_t kMax = static_cast<std::size_t>(PTRDIFF_MAX) / 4;
    if (current > kMax || n > kMax - current) return false;
    const std::size_t needed = current + n;
    const std::size_t wanted = needed + needed / 4;
    const std::size_t bytes = std::max(ChunkSize, align_up(sizeof(Chunk) + wanted, kAlignment));
    auto* chunk = static_cast<Chunk*>(Super::malloc(bytes));
    if (!chunk) return false;
    chunk->prev = chunk_;
    chunk->limit = reinterpret_cast<char*>(chunk) + bytes;
    if (current) std::memcpy(data(chunk), object_, current);
    // A chunk that held nothing but the growing object is now empty: give it back.
    if (chunk_ && object_ == data(chunk_)) {
      chunk->prev = chunk_->prev;
      Super::free(chunk_);
    }
    chunk_ = chunk;
    object_ = data(chunk);
    next_ = object_ + needed;
    limit_ = chunk->limit;
    return true;
  }

  Chunk* chunk_ = nullptr;  // newest chunk; the growing object lives here
  char* object_ = nullptr;  // start of the growing object
  char* next_ = nullptr;    // end of the growing object
  char* limit_ = nullptr;   // end of chunk_
};

}  // namespace strata::layers
