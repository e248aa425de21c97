// ChunkHeap — carves objects out of chunks of ChunkSize bytes obtained from Super.
//
// malloc bumps the request (rounded up to 16 bytes) out of the current chunk; when
// it does not fit, a new chunk is fetched (a request bigger than a chunk gets a
// chunk of its own, rounded up to whole chunks) and the old chunk's tail is
// abandoned. Objects are 16-byte aligned if Super's chunks are.
//
// Limits: free is a no-op — objects are not returned one by one. It is meant to
// sit under a layer that recycles objects, typically FreelistHeap<ChunkHeap<...>>
// for objects of one size. Every chunk goes back to Super in clear() and the
// destructor (each chunk starts with a 16-byte link so they can be found).
// nullptr from Super (or an overflowing size) gives nullptr + ENOMEM.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/layers/building_blocks/intrusive_slist.hpp"
#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t ChunkSize, Heap Super>
class ChunkHeap : public Super {
  static_assert(ChunkSize % kAlignment == 0 && ChunkSize > 2 * kAlignment,
                "ChunkSize must be a multiple of 16 bytes, larger than 32");

 public:
  ChunkHeap() = default;
  ChunkHeap(const ChunkHeap&) = delete;
  ChunkHeap& operator=(const ChunkHeap&) = delete;
  ~ChunkHeap() { clear(); }

  void* malloc(std::size_t size) {
    if (size > SIZE_MAX - 2 * ChunkSize) [[unlikely]] {
      errno = ENOMEM;
      return nullptr;
    }
    const std::size_t bytes = size == 0 ? kAlignment : align_up(size, kAlignment);
    if (bytes > static_cast<std::size_t>(end_ - cursor_)) [[unlikely]] {
      if (!refill(bytes)) return nullptr;
    }
    void* object = cursor_;
    cursor_ += bytes;
    return object;
  }

  // Objects are not returned individually.
  void free(void*) noexcept {}

  // Objects here are not Super's objects as Super knows them: hide Super's
  // object-level extras rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;
  std::size_t getSize(void*) = delete;  // carved objects carry no size

  // Return every chunk to Super; all objects carved so far become invalid.
  void clear() {
    chunks_.drain([this](ChunkLink* chunk) { Super::free(chunk); });
    cursor_ = end_ = nullptr;
  }

 private:
  struct alignas(kAlignment) ChunkLink {
    SListLink<ChunkLink> older;  // in chunks_
  };

  bool refill(std::size_t bytes) {
    const std::size_t wanted = bytes + sizeof(ChunkLink);
    const std::size_t length = (wanted + ChunkSize - 1) / ChunkSize * ChunkSize;
    auto* chunk = static_cast<char*>(Super::malloc(length));
    if (chunk == nullptr) return false;
    chunks_.push_front(reinterpret_cast<ChunkLink*>(chunk));
    cursor_ = chunk + sizeof(ChunkLink);
    end_ = chunk + length;
    return true;
  }

  IntrusiveSList<ChunkLink, &ChunkLink::older> chunks_;  // newest first
  char* cursor_ = nullptr;  // next free byte of the current chunk
  char* end_ = nullptr;     // end of the current chunk
};

}  // namespace strata::layers
