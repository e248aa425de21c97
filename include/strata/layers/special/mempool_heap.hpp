// MempoolHeap — a pool of fixed-size objects in chunks, with a LIFO free list
// and iteration over the live objects: the design of Blender's BLI_mempool
// (2026 paper §2.2.3, "hybrid").
//
// Each chunk holds PerChunk slots of ObjectSize bytes (rounded up to 16, at
// least two words) and is taken from Super when the free list is empty; all of
// its slots go on the free list at once, first slot first. free pushes the
// object on the list (reused by the next malloc); clear() (and the destructor)
// give every chunk back to Super at once.
//
// Iteration: a freed slot holds the list link in its first word and kFreeTag in
// its second, so the iterator walks the chunks in the order they were taken and
// skips tagged slots. Objects may be allocated and freed while iterating (the
// iterator only holds a chunk and an index): a freed object not yet reached is
// skipped, a new one is visited if it lands ahead of the iterator.
//
// Limits: a live object must never hold kFreeTag in its second 8-byte word
// (put a pointer or a small integer there); a request larger than a slot
// gives nullptr + EINVAL; double free (a tagged slot freed again) aborts with
// the address; no memory goes back to Super before clear(); not thread safe.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t ObjectSize, std::size_t PerChunk, Heap Super>
class MempoolHeap : public Super {
  static_assert(ObjectSize > 0 && PerChunk > 0, "MempoolHeap: empty objects or chunks");
  struct FreeSlot {
    FreeSlot* next;
    std::uint64_t tag;
  };
  struct alignas(kAlignment) Chunk {
    Chunk* next;  // the next chunk taken (iteration order)
    char* slots() noexcept { return reinterpret_cast<char*>(this + 1); }
  };
  static_assert(sizeof(Chunk) == kAlignment);


 public:
  // What a free slot holds in its second word (not a canonical x86-64 pointer).
  static constexpr std::uint64_t kFreeTag = 0xF4EE'5107'F4EE'5107ULL;
  static constexpr std::size_t kSlotSize = align_up(ObjectSize < 16 ? 16 : ObjectSize, kAlignment);

  MempoolHeap() = default;
  MempoolHeap(const MempoolHeap&) = delete;
  MempoolHeap& operator=(const MempoolHeap&) = delete;
  ~MempoolHeap() { clear(); }

  void* malloc(std::size_t size) {
    if (size > kSlotSize) [[unlikely]] {
      errno = EINVAL;
      return nullptr;
    }
    if (free_ == nullptr && !add_chunk()) [[unlikely]]
      return nullptr;
    FreeSlot* slot = free_;
    free_ = slot->next;
    slot->tag = 0;  // live: the iterator visits it from now on
    ++live_;
    return slot;
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    auto* slot = static_cast<FreeSlot*>(ptr);
    if (slot->tag == kFreeTag) [[unlikely]] {
      std::fprintf(stderr, "strata MempoolHeap: double free %p\n", ptr);
      std::abort();
    }
    slot->next = free_;
    slot->tag = kFreeTag;
    free_ = slot;
    --live_;
  }

  // Every chunk back to Super: all objects die.
  void clear() {
    while (Chunk* chunk = chunks_) {
      chunks_ = chunk->next;
      Super::free(chunk);
    }
    last_ = nullptr;
    free_ = nullptr;
    live_ = 0;
    chunk_count_ = 0;
  }

  std::size_t liveObjects() const noexcept { return live_; }
  std::size_t chunkCount() const noexcept { return chunk_count_; }

  // Walks the live objects, chunk by chunk, slot by slot.
  class Iterator {
   public:
    // The next live object, or nullptr at the end.
    void* next() noexcept {
      while (chunk_ != nullptr) {
        while (index_ < PerChunk) {
          auto* slot = reinterpret_cast<FreeSlot*>(chunk_->slots() + index_++ * kSlotSize);
          if (slot->tag != kFreeTag) return slot;
        }
        chunk_ = chunk_->next;
        index_ = 0;
      }
      return nullptr;
    }

   private:
    friend class MempoolHeap;
    explicit Iterator(Chunk* first) noexcept : chunk_(first) {}
    Chunk* chunk_;
    std::size_t index_ = 0;
  };

  // An iterator at the first slot; do not clear() the pool while it is in use.
  Iterator iterate() const noexcept { return Iterator(chunks_); }

  // Calls f(void*) on every live object (f may malloc and free).
  template <class F>
  void forEach(F&& f) {
    Iterator it = iterate();
    while (void* object = it.next()) f(object);
  }

  // Objects are fixed-size slots: the parent's other operations do not apply.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;
  std::size_t getSize(void*) = delete;

 private:
  // Takes a chunk from Super and puts all its slots on the free list, first
  // slot first, so a fresh pool hands out consecutive slots.
  bool add_chunk() {
    static_assert(PerChunk <= (SIZE_MAX - sizeof(Chunk)) / kSlotSize, "MempoolHeap: chunk too large");
    auto* chunk = static_cast<Chunk*>(Super::malloc(sizeof(Chunk) + PerChunk * kSlotSize));
    if (chunk == nullptr) {
      errno = ENOMEM;
      return false;
    }
    chunk->next = nullptr;
    if (last_ != nullptr)
      last_->next = chunk;
    else
      chunks_ = chunk;
    last_ = chunk;
    ++chunk_count_;
    for (std::size_t i = PerChunk; i-- > 0;) {
      auto* slot = reinterpret_cast<FreeSlot*>(chunk->slots() + i * kSlotSize);
      slot->next = free_;
      slot->tag = kFreeTag;
      free_ = slot;
    }
    return true;
  }

  Chunk* chunks_ = nullptr;  // oldest first
  Chunk* last_ = nullptr;
  FreeSlot* free_ = nullptr;
  std::size_t live_ = 0;
  std::size_t chunk_count_ = 0;
};

}  // namespace strata::layers
