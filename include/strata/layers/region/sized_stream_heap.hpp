// SizedStreamHeap — one bump stream for objects of every size, with no
// per-object metadata: the caller gives the size back at free.
//
// Template parameters:
//   Super   a RunSource: a RegionChunkHeap over a ChunkSource.
//   Cursor  where the bump pointer lives (run_stream.hpp; strata reaps use
//           the sized window of their public head, strata_reap_head::sized).
//
// The cursor, its inline window, rounds (clear) and own mappings are
// RunStream's (run_stream.hpp).
//
// The tagged stream (tagged_stream_heap.hpp) spends a byte per object so that
// free(p) finds the size; a caller who passes the size at free (C23
// free_sized, sized operator delete, std::pmr, Rust's Allocator) pays for
// nothing it uses. Here a request of n bytes takes a slot of n rounded up to
// kSizedGranule (8 bytes): objects sit side by side exactly as in a
// hand-written bump region, and the inline bump is the whole fast path.
//
// Objects above kMaxSizedSlot have a mapping of their own with a header in
// front; free tells them apart by their size alone. Aligned requests bump to
// the alignment (the gap is lost until clear()).
//
// Statistics: no walk is possible (nothing records where an object ends),
// so the layer counts bytes only: those bumped through (every run left, plus
// the current one up to its bump), minus alignment gaps, plus mapped objects.
// Objects are not counted.
// Limits: no coalescing; the tail of a run the stream leaves is lost until
// clear(); not thread safe.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/assert.hpp"
#include "strata/layers/building_blocks/intrusive_dlist.hpp"
#include "strata/layers/heap.hpp"
#include "strata/layers/region/chunk_source.hpp"
#include "strata/layers/region/concepts.hpp"
#include "strata/layers/region/detail/instrument.hpp"
#include "strata/layers/region/region_chunk_heap.hpp"
#include "strata/layers/region/run_stream.hpp"
#include "strata/reap.h"

namespace strata::layers {

// strata/reap.h's sized contract is the source; a change the layer cannot
// follow stops the build here.
inline constexpr std::size_t kSizedGranule = STRATA_REAP_SIZED_GRANULE;
inline constexpr std::size_t kMaxSizedSlot = STRATA_REAP_SIZED_MAX_SLOT;
static_assert(kSizedGranule >= sizeof(void*) && (kSizedGranule & (kSizedGranule - 1)) == 0,
              "the sized granule is a power of two that holds a free-list link");
static_assert(kMaxSizedSlot % kSizedGranule == 0);

// The slot of a request; 0 for size 0 and sizes near SIZE_MAX (callers
// treat slot - 1 >= kMaxSizedSlot as "not a stream object").
constexpr std::size_t sized_slot_of(std::size_t size) noexcept {
  return (size + kSizedGranule - 1) & ~(kSizedGranule - 1);
}
// An object of this size lives in the stream (else in a mapping of its own).
constexpr bool sized_in_stream(std::size_t size) noexcept { return size <= kMaxSizedSlot; }
// The slot a stream object really occupies (size 0 takes one granule): at
// least a granule, never wrapped. Only for stream sizes: near SIZE_MAX the
// rounding wraps to a small slot.
constexpr std::size_t sized_slot_taken(std::size_t size) noexcept {
  STRATA_ASSERT(sized_in_stream(size));
  return std::max(sized_slot_of(size), kSizedGranule);
}

// In front of an object with a mapping of its own.
struct SizedMappedHeader {
  void* map_base;
  std::size_t map_bytes;
  std::size_t slot_bytes;             // the size rounded to kSizedGranule: what the statistics count
  DListLink<SizedMappedHeader> link;  // listed, so that clear() finds it
};

template <RunSource Super, class Cursor>
class SizedStreamHeap : public RunStream<Super, Cursor, SizedMappedHeader> {
  using Base = RunStream<Super, Cursor, SizedMappedHeader>;
  using Base::cursor_;
  using Base::refreshWindow;
  using Base::run_begin_;
  using Base::run_end_;

 public:
  // The out-of-line bump: any size, aligned to kSizedGranule. nullptr +
  // ENOMEM when out of memory.
  void* malloc(std::size_t size) noexcept {
    if (!sized_in_stream(size)) return mapObject(size, kSizedGranule);
    const std::size_t slot = sized_slot_taken(size);
    const std::uintptr_t start = cursor_->bump;
    if (slot > run_end_ - start || start == 0) return place(slot, kSizedGranule);
    cursor_->bump = start + slot;
    refreshWindow();
    return reinterpret_cast<void*>(start);
  }

  // alignment: a power of two. Freed with the same size as any object.
  void* mallocAligned(std::size_t size, std::size_t alignment) noexcept {
    alignment = std::max(alignment, kSizedGranule);
    if (!sized_in_stream(size)) return mapObject(size, alignment);
    return place(sized_slot_taken(size), alignment);
  }

  // Region semantics: stream objects wait for clear() (the layer above
  // reuses them), mapped ones go back now. size: as allocated.
  void free(void* ptr, std::size_t size) noexcept {
    if (!sized_in_stream(size)) unmapObject(ptr);
  }

  // Take back the stream's last object (slot bytes): true when ptr was it,
  // and the stream now bumps from ptr again.
  bool unbumpLast(void* ptr, std::size_t slot) noexcept {
    const auto object = reinterpret_cast<std::uintptr_t>(ptr);
    if (object + slot != cursor_->bump || object < run_begin_) return false;
    cursor_->bump = object;
    refreshWindow();
    return true;
  }

  // Resize the stream's last object (old_slot bytes at ptr) to new_slot in
  // place: true when it was the last one and its run holds the new length.
  bool resizeLast(void* ptr, std::size_t old_slot, std::size_t new_slot) noexcept {
    const auto object = reinterpret_cast<std::uintptr_t>(ptr);
    if (object + old_slot != cursor_->bump || object < run_begin_) return false;
    if (new_slot > run_end_ - object) return false;
    cursor_->bump = object + new_slot;
    refreshWindow();
    return true;
  }

  void clear() noexcept {
    left_bytes_ = gap_bytes_ = 0;
    Base::clear();
  }

  void releaseAll() noexcept {
    left_bytes_ = gap_bytes_ = 0;
    Base::releaseAll();
  }

  // malloc(size) would bump within the current run (no new run needed).
  bool fitsRun(std::size_t size) const noexcept {
    return sized_in_stream(size) && cursor_->bump != 0 && sized_slot_taken(size) <= run_end_ - cursor_->bump;
  }

  // Bytes handed out since clear() (slots, freed or not; mapped objects).
  std::size_t streamBytes() const noexcept {
    const std::size_t current = cursor_->bump != 0 ? cursor_->bump - run_begin_ : 0;
    return left_bytes_ + current - gap_bytes_ + Base::mappedBytes();
  }

 private:
  // A slot aligned to `alignment`, in this run or the next.
  void* place(std::size_t slot, std::size_t alignment) noexcept {
    std::uintptr_t start = align_up(cursor_->bump, alignment);
    if (cursor_->bump == 0 || start > run_end_ || slot > run_end_ - start) {
      ChunkRun run = Super::nextRun(slot + alignment);
      if (run.begin == nullptr) return nullptr;  // ENOMEM set
      if (cursor_->bump != 0) left_bytes_ += cursor_->bump - run_begin_;
      Base::enterRun(run);
      start = align_up(cursor_->bump, alignment);
    }
    gap_bytes_ += start - cursor_->bump;
    cursor_->bump = start + slot;
    refreshWindow();
    return reinterpret_cast<void*>(start);
  }

  // A mapping of its own, counted by its slot.
  void* mapObject(std::size_t size, std::size_t alignment) noexcept {
    return Base::mapObject(size, alignment, [size](SizedMappedHeader* h, const void*) {
      return h->slot_bytes = sized_slot_of(size);  // mapObject bounds the size: no wrap
    });
  }

  void unmapObject(void* object) noexcept {
    SizedMappedHeader* h = Base::mappedHeader(object);
    Base::unmapObject(h, h->slot_bytes);
  }

  std::size_t left_bytes_ = 0;  // bumped through in runs the stream left
  std::size_t gap_bytes_ = 0;   // alignment gaps (bumped, never handed out)
};

}  // namespace strata::layers
