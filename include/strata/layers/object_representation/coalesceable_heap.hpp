// CoalesceableHeap — boundary tags for coalescing (the paper's object
// representation for CoalesceHeap).
//
// Every chunk has a 16-byte header just before the object:
//   prev_size   the size of the chunk just before it (meaningful when it is free)
//   size_bits   this chunk's size (a multiple of 16) | flag bits:
//     kPrevFree   the chunk just before is free  — a chunk's own free bit lives in
//                 the header of the NEXT chunk, as in the paper
//     kFence      not a chunk: the end of a block from Super (never coalesced with)
//     kBlockStart this header is where Super's block begins
//     kMmapped    the chunk is its own mapping (set by LeaHeap's mmap path)
// malloc(sz) asks Super for the chunk (sz rounded to 16, at least 16) plus its
// header plus a fence header after it. When Super's block begins right after the
// previous block's fence (SbrkHeap's consecutive bumps), the fence becomes the new
// chunk's header and the chunk gains its 16 bytes, so chunks of consecutive blocks
// are neighbours and can later be coalesced; otherwise blocks are islands.
// Static accessors (getSize, getPrev, getNext, isFree, markFree, …) give
// CoalesceHeap what it needs; objects are 16-byte aligned if Super's blocks are.
//
// Limits: 16 bytes per chunk plus 16 per non-contiguous block. free(ptr) gives a
// chunk back to Super only if it still is exactly one whole block of Super
// (neither split nor merged); otherwise the memory stays (CoalesceHeap over
// SegHeap never frees to here; with SbrkHeap free is a no-op anyway).
// nullptr from Super (or an overflowing size) is nullptr + ENOMEM.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/layers/heap.hpp"

namespace strata::layers {

// The boundary-tag format, shared by everything that makes chunks CoalesceHeap
// and LeaHeap can read.
struct ChunkHeader {
  static constexpr std::size_t kPrevFree = 1;
  static constexpr std::size_t kFence = 2;
  static constexpr std::size_t kBlockStart = 4;
  static constexpr std::size_t kMmapped = 8;
  static constexpr std::size_t kFlagMask = 15;
  static constexpr std::size_t kMinChunkSize = 16;

  std::size_t prev_size;
  std::size_t size_bits;

  static ChunkHeader* of(void* object) noexcept { return static_cast<ChunkHeader*>(object) - 1; }
  void* object() noexcept { return this + 1; }
  std::size_t size() const noexcept { return size_bits & ~kFlagMask; }
  bool has(std::size_t flag) const noexcept { return (size_bits & flag) != 0; }
  void set(std::size_t flag) noexcept { size_bits |= flag; }
  void clear(std::size_t flag) noexcept { size_bits &= ~flag; }
  ChunkHeader* next() noexcept { return reinterpret_cast<ChunkHeader*>(reinterpret_cast<char*>(this + 1) + size()); }
};
static_assert(sizeof(ChunkHeader) == kAlignment);

template <Heap Super>
class CoalesceableHeap : public Super {
 public:
  static constexpr std::size_t kHeaderSize = sizeof(ChunkHeader);

  void* malloc(std::size_t size) {
    if (size > SIZE_MAX - 4 * kHeaderSize) [[unlikely]] {
      errno = ENOMEM;
      return nullptr;
    }
    std::size_t chunk = align_up(size, kAlignment);
    if (chunk < ChunkHeader::kMinChunkSize) chunk = ChunkHeader::kMinChunkSize;
    auto* block = static_cast<char*>(Super::malloc(chunk + 2 * kHeaderSize));
    if (block == nullptr) return nullptr;
    ChunkHeader* header;
    if (last_fence_ != nullptr && block == reinterpret_cast<char*>(last_fence_ + 1)) {
      header = last_fence_;  // the old fence becomes this chunk's header
      chunk += kHeaderSize;
      header->size_bits = chunk | (header->size_bits & ChunkHeader::kPrevFree);
    } else {
      header = reinterpret_cast<ChunkHeader*>(block);
      header->prev_size = 0;
      header->size_bits = chunk | ChunkHeader::kBlockStart;
    }
    ChunkHeader* fence = header->next();
    fence->prev_size = chunk;
    fence->size_bits = ChunkHeader::kFence;
    last_fence_ = fence;
    return header->object();
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    ChunkHeader* header = ChunkHeader::of(ptr);
    ChunkHeader* next = header->next();
    if (!header->has(ChunkHeader::kBlockStart) || !next->has(ChunkHeader::kFence)) return;
    if (next == last_fence_) last_fence_ = nullptr;
    Super::free(header);
  }

  // Release everything Super holds (no block is continued afterwards).
  void clear()
    requires ClearableHeap<Super>
  {
    last_fence_ = nullptr;
    Super::clear();
  }

  // Objects here are not Super's objects as Super knows them: hide Super's
  // object-level extras rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

  // --- the representation, for CoalesceHeap and friends (object pointers) ---
  static std::size_t getSize(void* ptr) noexcept { return ChunkHeader::of(ptr)->size(); }
  // Resize a chunk in place (after a split or merge): its header and the next one's prev_size.
  static void setSize(void* ptr, std::size_t size) noexcept {
    ChunkHeader* header = ChunkHeader::of(ptr);
    header->size_bits = size | (header->size_bits & ChunkHeader::kFlagMask);
    header->next()->prev_size = size;
  }
  static void* getNext(void* ptr) noexcept { return ChunkHeader::of(ptr)->next()->object(); }
  static void* getPrev(void* ptr) noexcept {
    ChunkHeader* header = ChunkHeader::of(ptr);
    return reinterpret_cast<char*>(header) - header->prev_size;
  }
  static bool isPrevFree(void* ptr) noexcept { return ChunkHeader::of(ptr)->has(ChunkHeader::kPrevFree); }
  static bool isFence(void* ptr) noexcept { return ChunkHeader::of(ptr)->has(ChunkHeader::kFence); }
  static bool isFree(void* ptr) noexcept { return ChunkHeader::of(ptr)->next()->has(ChunkHeader::kPrevFree); }
  static void markFree(void* ptr) noexcept { ChunkHeader::of(ptr)->next()->set(ChunkHeader::kPrevFree); }
  static void markInUse(void* ptr) noexcept { ChunkHeader::of(ptr)->next()->clear(ChunkHeader::kPrevFree); }
  static bool isMmapped(void* ptr) noexcept { return ChunkHeader::of(ptr)->has(ChunkHeader::kMmapped); }

  // Turn [object - 16, object + size) into a chunk whose predecessor is in use.
  static void makeChunk(void* object, std::size_t size) noexcept {
    ChunkHeader* header = ChunkHeader::of(object);
    header->size_bits = size;
    header->next()->prev_size = size;
  }

 private:
  ChunkHeader* last_fence_ = nullptr;  // the fence of the newest block: a block starting
                                       // right after it continues that block
};

// What CoalesceHeap needs below it: the boundary-tag accessors plus a heap whose
// free chunks can be taken out again (remove).
template <class H>
concept CoalesceableRepresentation = Heap<H> && requires(H heap, void* ptr, std::size_t size) {
  { H::getSize(ptr) } -> std::same_as<std::size_t>;
  H::setSize(ptr, size);
  H::makeChunk(ptr, size);
  { H::getNext(ptr) } -> std::same_as<void*>;
  { H::getPrev(ptr) } -> std::same_as<void*>;
  { H::isPrevFree(ptr) } -> std::same_as<bool>;
  { H::isFence(ptr) } -> std::same_as<bool>;
  { H::isFree(ptr) } -> std::same_as<bool>;
  H::markFree(ptr);
  H::markInUse(ptr);
  heap.remove(ptr);
};

}  // namespace strata::layers
