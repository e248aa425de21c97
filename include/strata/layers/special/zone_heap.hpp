// ZoneHeap — a region ("zone"): malloc bumps a pointer through chunks of
// ChunkSize bytes taken from Super; free is a no-op; clear() (and the
// destructor) give every chunk back at once. A request too large for a chunk
// gets a chunk of its own, so any size works. Objects are kAlignment-aligned
// (given Super's blocks are); malloc(0) returns a unique pointer.
// Limits: memory of dead objects is not reused until clear() — the reason reaps
// exist; when a chunk fills, its tail is wasted; not thread safe.
#pragma once
#include <cstddef>
#include <cstdint>

#include "strata/layers/building_blocks/intrusive_slist.hpp"
#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t ChunkSize, Heap Super>
class ZoneHeap : public Super {
  struct alignas(kAlignment) Chunk {
    SListLink<Chunk> older;  // in chunks_
  };
  static_assert(sizeof(Chunk) == kAlignment);
  static_assert(ChunkSize % kAlignment == 0 && ChunkSize > sizeof(Chunk),
                "ZoneHeap: ChunkSize must be a multiple of kAlignment larger than a chunk header");
  static constexpr std::size_t kChunkCapacity = ChunkSize - sizeof(Chunk);

 public:
  using Super::Super;
  ZoneHeap() = default;
  ZoneHeap(const ZoneHeap&) = delete;
  ZoneHeap& operator=(const ZoneHeap&) = delete;
  ~ZoneHeap() { clear(); }

  void* malloc(std::size_t size) noexcept {
    if (size > SIZE_MAX - ChunkSize) return nullptr;
    const std::size_t rounded = size == 0 ? kAlignment : align_up(size, kAlignment);
    if (rounded <= static_cast<std::size_t>(limit_ - next_)) {
      char* p = next_;
      next_ += rounded;
      return p;
    }
    if (rounded > kChunkCapacity) return dedicated_chunk(rounded);
    Chunk* chunk = new_chunk(ChunkSize);
    if (!chunk) return nullptr;
    next_ = reinterpret_cast<char*>(chunk + 1) + rounded;
    limit_ = reinterpret_cast<char*>(chunk) + ChunkSize;
    return chunk + 1;
  }

  void free(void*) noexcept {}

  void clear() noexcept {
    chunks_.drain([this](Chunk* chunk) { Super::free(chunk); });
    next_ = limit_ = nullptr;
    chunk_count_ = 0;
  }

  // The parent's other whole-object operations do not understand this layer's
  // objects: hide them rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;
  std::size_t getSize(void*) = delete;  // objects carry no size

  // Chunks currently held from Super.
  std::size_t chunkCount() const noexcept { return chunk_count_; }

 private:
  Chunk* new_chunk(std::size_t bytes) noexcept {
    auto* chunk = static_cast<Chunk*>(Super::malloc(bytes));
    if (!chunk) return nullptr;
    chunks_.push_front(chunk);
    ++chunk_count_;
    return chunk;
  }

  // Large objects: their own chunk; the current chunk keeps bumping.
  void* dedicated_chunk(std::size_t rounded) noexcept {
    Chunk* chunk = new_chunk(sizeof(Chunk) + rounded);
    return chunk ? chunk + 1 : nullptr;
  }

  IntrusiveSList<Chunk, &Chunk::older> chunks_;  // every chunk, newest first
  char* next_ = nullptr;     // bump pointer in the current chunk
  char* limit_ = nullptr;
  std::size_t chunk_count_ = 0;
};

}  // namespace strata::layers
