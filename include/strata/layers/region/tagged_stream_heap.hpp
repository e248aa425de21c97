// TaggedStreamHeap — one bump stream for objects of every size, each object's
// size in a one-byte boundary tag.
//
// Template parameters:
//   Super          a RunSource: a RegionChunkHeap over a ChunkSource.
//   Cursor         where the bump pointer lives (run_stream.hpp): BumpCursor
//                  by default; strata reaps use their public strata_reap_head.
//   MaxStreamSlot  objects up to this size are bumped from the stream; bigger
//                  ones (and alignments above 4 KiB) get a mapping of their own.
//
// The stream. Objects are placed one after the other, whatever their size, as
// in a hand-written region: objects allocated together sit together. A small
// request of n bytes takes a *slot* of n + 1 bytes rounded up to the granule
// (strata/reap.h's STRATA_REAP_GRANULE, up to STRATA_REAP_MAX_TAGGED_SLOT):
// the object, then at least one spare byte. That spare last byte of each slot
// holds the boundary tag of the *next* slot — its length in granules — so the
// byte just before any object says how long it is.
//
// Why a boundary tag (and not a header, a side table, or size-segregated
// slabs): the allocation fast path must be the plain bump plus as little as
// possible. A start-bit side table, a byte-per-granule table and an 8-byte
// header each cost the fast path more, and the header much more memory for
// small objects; per-class slabs cost nothing per object but scatter
// consecutive objects over many places (the measurements: docs/reaps.md).
//
// Larger objects (slot > kMaxTaggedSlot) carry a 64-byte LargeHeader in front;
// their tag byte is 0, and so is the header's last byte (the byte before the
// object), which is how getSize tells them apart. Objects above MaxStreamSlot
// have their own mapping (header included), unmapped by free.
//
// The cursor, its inline window, rounds (clear) and own mappings are
// RunStream's (run_stream.hpp). The inline path (strata_reap_malloc) keeps
// slots within kMaxTaggedSlot itself, so that their tags fit in a byte: the
// window spans the whole run (a window bounded to one slot called the layer
// that often). malloc() here is the out-of-line bump, with the same layout.
//
// growLast() lets realloc grow the object bumped last in place, as an obstack
// grows its top object.
//
// free() of a stream object does nothing (region semantics: ClearOptimizedHeap
// above reuses freed objects); free() of a mapped object unmaps it. Statistics
// (objects, usable bytes) come from walking the stream's tags lazily: every
// slot is walked once per round, so they cost amortised constant time.
// Limits: no coalescing; the tail of a chunk the stream leaves is lost until
// clear(); not thread safe.
#pragma once
#include <algorithm>
#include <bit>
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

// The default home of a stream's bump pointer.
struct BumpCursor {
  std::uintptr_t bump = 0;
  std::uintptr_t limit = 0;
  std::uint32_t flags = 0;
  std::uint32_t version = 0;
};

// The contract of strata/reap.h's inline path, which writes these tags too:
// its constants are the source, and a change there that the layers cannot
// follow stops the build here.
inline constexpr std::size_t kTagGranule = STRATA_REAP_GRANULE;
inline constexpr std::size_t kMaxTaggedSlot = 255 * kTagGranule;  // the tag is one byte
static_assert(kTagGranule >= 16 && (kTagGranule & (kTagGranule - 1)) == 0,
              "the granule is a power of two, at least 16 (LargeHeader, alignment)");
static_assert(kMaxTaggedSlot == STRATA_REAP_MAX_TAGGED_SLOT,
              "strata/reap.h's largest tagged slot is not the tagged stream's");
inline constexpr std::size_t kLargeHeaderBytes = 64;
inline constexpr std::size_t kMaxStreamAlignment = 4096;

// Why the inline window is closed (Cursor::flags bits; strata/reap.h's STRATA_REAP_SLOW_*).
inline constexpr std::uint32_t kInlineClosedChecked = 1;
inline constexpr std::uint32_t kInlineClosedFreed = 2;

// The slot of a small request: the object and at least one spare byte, in
// 16-byte granules. Sizes near SIZE_MAX wrap to 0 (callers treat 0 as "not small").
constexpr std::size_t tagged_slot_of(std::size_t size) noexcept { return (size + kTagGranule) & ~(kTagGranule - 1); }
static_assert(tagged_slot_of(0) == kTagGranule && tagged_slot_of(kTagGranule - 1) == kTagGranule &&
              tagged_slot_of(kTagGranule) == 2 * kTagGranule);

// The tag byte before an object: its slot in granules, 0 for a large object.
// kInstrumented (the default): the byte may be hidden from ASan or Valgrind,
// so read it through instrument::; false: a plain load, for the paths that
// run only when neither watches (an unchecked reap outside ASan).
template <bool kInstrumented = true>
inline std::size_t tag_of(const void* object) noexcept {
  const auto* tag = static_cast<const unsigned char*>(object) - 1;
  if constexpr (kInstrumented || instrument::kAsan) return instrument::read_hidden_byte(tag);
  else return *tag;
}
template <bool kInstrumented = true>
inline void set_tag(void* object, std::size_t granules) noexcept {
  STRATA_ASSERT(granules * kTagGranule <= kMaxTaggedSlot &&
                reinterpret_cast<std::uintptr_t>(object) % kTagGranule == 0);
  auto* tag = static_cast<unsigned char*>(object) - 1;
  if constexpr (kInstrumented || instrument::kAsan) instrument::write_hidden_byte(tag, static_cast<unsigned char>(granules));
  else *tag = static_cast<unsigned char>(granules);
}

// In front of every object too large for a tag.
struct LargeHeader {
  std::size_t slot_bytes;  // in the stream: header + object + spare byte; 0: a mapping of its own
  void* map_base;          // own mapping only
  std::size_t map_bytes;
  DListLink<LargeHeader> link;  // own mappings are listed, so that clear() finds them
  std::size_t reserved;
  unsigned char pad[15];
  unsigned char zero_tag;  // the byte before the object: 0 says "large"
};
static_assert(sizeof(LargeHeader) == kLargeHeaderBytes);

inline LargeHeader* large_header_of(const void* object) noexcept {
  return reinterpret_cast<LargeHeader*>(const_cast<char*>(static_cast<const char*>(object)) - kLargeHeaderBytes);
}

template <RunSource Super, class Cursor = BumpCursor, std::size_t MaxStreamSlot = 64 * 1024>
class TaggedStreamHeap : public RunStream<Super, Cursor, LargeHeader> {
  static_assert(MaxStreamSlot > kMaxTaggedSlot + kLargeHeaderBytes, "TaggedStreamHeap: MaxStreamSlot too small");
  using Base = RunStream<Super, Cursor, LargeHeader>;
  using Base::cursor_;
  using Base::refreshWindow;
  using Base::run_begin_;
  using Base::run_end_;

 public:
  // The out-of-line bump: any size. nullptr + ENOMEM when out of memory.
  // kInstrumented: as for tag_of (false only where neither ASan nor Valgrind watches).
  template <bool kInstrumented = true>
  void* malloc(std::size_t size) noexcept {
    const std::size_t slot = tagged_slot_of(size);
    if (slot - 1 >= kMaxTaggedSlot) return mallocLarge(size, kTagGranule);
    const std::uintptr_t start = cursor_->bump;
    if (start + slot > run_end_) return place(0, slot, kTagGranule);  // the next run (or none yet)
    // The common case in a few instructions: a reap whose inline window is
    // closed (freed objects wait) comes here for every request they miss.
    set_tag<kInstrumented>(reinterpret_cast<void*>(start), slot / kTagGranule);
    cursor_->bump = start + slot;
    STRATA_ASSERT(cursor_->bump <= run_end_);  // the stream stays in its run
    refreshWindow();
    return reinterpret_cast<void*>(start);
  }

  // alignment: a power of two.
  void* mallocAligned(std::size_t size, std::size_t alignment) noexcept {
    alignment = std::max(alignment, kTagGranule);
    const std::size_t slot = tagged_slot_of(size);
    if (slot != 0 && slot <= kMaxTaggedSlot && alignment <= kMaxStreamAlignment) return place(0, slot, alignment);
    return mallocLarge(size, alignment);
  }

  // Region semantics: stream objects wait for clear(); own mappings go back now.
  void free(void* ptr) noexcept {
    if (tag_of(ptr) != 0) return;
    LargeHeader* h = large_header_of(ptr);
    if (h->slot_bytes == 0) Base::unmapObject(h, getSize(ptr));  // its own mapping goes back
  }

  // Grow (or keep) the stream's last object in place to hold `size` bytes, as
  // an obstack grows its top object: true when it now does. Only the object
  // the stream bumped last, and only within the run and the tag's 4080 bytes.
  // kInstrumented: as for tag_of.
  template <bool kInstrumented = true>
  bool growLast(void* ptr, std::size_t size) noexcept {
    const auto object = reinterpret_cast<std::uintptr_t>(ptr);
    const std::size_t old_slot = tag_of<kInstrumented>(ptr) * kTagGranule;
    const std::size_t new_slot = tagged_slot_of(size);
    if (old_slot == 0 || object + old_slot != cursor_->bump || object < stretchBegin()) return false;  // large, or not last
    if (new_slot - 1 >= kMaxTaggedSlot || object + new_slot > run_end_) return false;
    if (new_slot <= old_slot) return true;
    set_tag<kInstrumented>(ptr, new_slot / kTagGranule);
    if (walked_ > object) {  // the walk counted the old length (and stopped at its end)
      slot_bytes_ += new_slot - old_slot;
      walked_ = object + new_slot;
    }
    cursor_->bump = object + new_slot;
    refreshWindow();
    return true;
  }

  // Take back the stream's last object (slot bytes long): true when ptr was
  // it, and the stream now bumps from ptr again.
  bool unbumpLast(void* ptr, std::size_t slot) noexcept {
    const auto object = reinterpret_cast<std::uintptr_t>(ptr);
    // Not below the stretch's start: an object ending there belongs to another
    // (the previous run, or the stretch a loan interrupted), even when adjacent.
    if (object + slot != cursor_->bump || object < stretchBegin()) return false;
    if (walked_ > object) {  // the walk counted it already
      --slots_;
      slot_bytes_ -= usableOfSlot(slot);
      walked_ = object;
    }
    cursor_->bump = object;
    refreshWindow();
    return true;
  }

  template <bool kInstrumented = true>
  std::size_t getSize(const void* ptr) const noexcept {
    if (const std::size_t granules = tag_of<kInstrumented>(ptr)) return granules * kTagGranule - 1;
    const LargeHeader* h = large_header_of(ptr);
    if (h->slot_bytes != 0) return h->slot_bytes - kLargeHeaderBytes - 1;
    return reinterpret_cast<std::uintptr_t>(h->map_base) + h->map_bytes - reinterpret_cast<std::uintptr_t>(ptr);
  }

  void clear() noexcept {
    // A loan is no run of the stream's own: a round with one open never
    // starts over in place.
    if (Base::rewindRound(!lent_)) return restartWalk(run_begin_);
    forgetLoan();
    restartWalk(0);
    Base::resetRound();
  }

  void releaseAll() noexcept {
    forgetLoan();
    restartWalk(0);
    Base::releaseAll();
  }

  // A loan: the stream bumps through [begin, begin + bytes) — the rest of a
  // freed slot ClearOptimizedHeap split — as if it were a run, so that the
  // inline window serves the next requests from it instead of one split per
  // request. Its objects are walked (counted) like any run's. endLoan() hands
  // back what is left and resumes the stream's own run where it stopped.
  // One loan at a time; the stretch must not be counted by the walk already.
  void lendRun(void* begin, std::size_t bytes) noexcept {
    catchUp();  // the own run is walked up to its bump: no stretch of it waits to be walked
    loan_bump_ = cursor_->bump;
    loan_run_end_ = run_end_;
    lent_ = true;
    cursor_->bump = walked_ = loan_begin_ = reinterpret_cast<std::uintptr_t>(begin);
    run_end_ = cursor_->bump + bytes;
    refreshWindow();
  }
  bool lent() const noexcept { return lent_; }
  // malloc(size) would bump within the current run (no new run needed).
  bool fitsRun(std::size_t size) const noexcept {
    const std::size_t slot = tagged_slot_of(size);
    return slot - 1 < kMaxTaggedSlot && slot <= run_end_ - cursor_->bump;
  }
  // Ends the loan: the unused rest becomes one slot (counted by the walk),
  // returned for the caller to keep (nullptr when nothing is left; its
  // length in *bytes). Small loans only: the rest is a tagged slot.
  // kInstrumented: as for tag_of.
  template <bool kInstrumented = true>
  void* endLoan(std::size_t* bytes) noexcept {
    const std::uintptr_t rest = cursor_->bump;
    *bytes = run_end_ - rest;
    if (*bytes != 0) {
      set_tag<kInstrumented>(reinterpret_cast<void*>(rest), *bytes / kTagGranule);
      cursor_->bump = run_end_;  // the rest is walked as a slot of its own
    }
    // Walked now, not left pending as a run the stream leaves: the loan lies
    // inside the own run, which may later unbump down through it, and
    // unbumpLast takes whatever lies below walked_ as counted.
    walk<kInstrumented>(walked_, cursor_->bump);
    lent_ = false;
    loan_begin_ = 0;
    cursor_->bump = walked_ = loan_bump_;
    run_end_ = loan_run_end_;
    refreshWindow();
    return *bytes != 0 ? reinterpret_cast<void*>(rest) : nullptr;
  }
  // ClearOptimizedHeap cut a walked slot of `from` bytes to `to` bytes; the
  // rest is not counted until the walk finds it (lendRun).
  void noteShrunk(std::size_t from, std::size_t to) noexcept { slot_bytes_ -= from - to; }

  // Count the slots bumped since the last call by walking their tags: every
  // slot once per round, and only when somebody asks (statistics, a split), so
  // the bump itself counts nothing (amortised O(1)).
  void catchUp() const noexcept {
    if (pending_count_ != 0 || walked_ != cursor_->bump) walkPending();
  }

  // Objects (and their usable bytes) handed out since clear(), freed or not;
  // call catchUp() first.
  std::size_t streamObjects() const noexcept { return slots_ - fillers_ + Base::mappedObjects(); }
  std::size_t streamBytes() const noexcept { return slot_bytes_ - filler_bytes_ + Base::mappedBytes(); }

 private:
  static std::size_t usableOfSlot(std::size_t slot) noexcept {
    return slot > kMaxTaggedSlot ? slot - kLargeHeaderBytes - 1 : slot - 1;
  }
  // Out of line: callers (statistics, a split) stay small. Whether ASan or
  // Valgrind hides the tags is asked once per walk, not once per tag.
  [[gnu::noinline]] void walkPending() const noexcept {
    if (instrument::kAsan || instrument::valgrind_hooks_on()) walkPending<true>();
    else walkPending<false>();
  }
  template <bool kInstrumented>
  void walkPending() const noexcept {
    for (std::size_t i = 0; i < pending_count_; ++i) walk<kInstrumented>(pending_[i].begin, pending_[i].end);
    pending_count_ = 0;
    walked_ = walk<kInstrumented>(walked_, cursor_->bump);
  }

  // Counts the slots of [s, end); returns end.
  template <bool kInstrumented = true>
  std::uintptr_t walk(std::uintptr_t s, std::uintptr_t end) const noexcept {
    while (s < end) {
      std::size_t slot = tag_of<kInstrumented>(reinterpret_cast<const void*>(s)) * kTagGranule;
      if (slot == 0) slot = reinterpret_cast<const LargeHeader*>(s)->slot_bytes;
      ++slots_;
      slot_bytes_ += usableOfSlot(slot);
      s += slot;
    }
    return s;
  }

  // The stream leaves its run: what it bumped there and nobody walked yet is
  // walked later (a few runs are remembered; more are walked now).
  void leaveRun() noexcept {
    if (walked_ >= cursor_->bump) return;
    if (pending_count_ == kPendingRuns) {
      walk(pending_[0].begin, pending_[0].end);
      for (std::size_t i = 1; i < kPendingRuns; ++i) pending_[i - 1] = pending_[i];
      --pending_count_;
    }
    pending_[pending_count_++] = {walked_, cursor_->bump};
  }

  // Where the stretch the stream bumps through starts: the top object may be
  // taken back or grown only within it.
  std::uintptr_t stretchBegin() const noexcept { return lent_ ? loan_begin_ : run_begin_; }

  void forgetLoan() noexcept {
    lent_ = false;
    loan_begin_ = 0;
  }

  // A new round, the stream bumping from `start` (0: no run yet): the
  // statistics start over.
  void restartWalk(std::uintptr_t start) noexcept {
    walked_ = start;
    pending_count_ = 0;
    slots_ = slot_bytes_ = fillers_ = filler_bytes_ = 0;
  }

  // A slot of `slot` bytes whose object (`lead` bytes into it) is aligned to
  // `alignment`; the gap before it becomes filler slots nobody owns.
  void* place(std::size_t lead, std::size_t slot, std::size_t alignment) noexcept {
    std::uintptr_t start = slotStart(lead, alignment);
    if (start + slot > run_end_) {
      ChunkRun run = Super::nextRun(slot + alignment);
      if (run.begin == nullptr) return nullptr;  // ENOMEM set
      leaveRun();
      Base::enterRun(run);
      walked_ = run_begin_;
      start = slotStart(lead, alignment);
    }
    fill(cursor_->bump, start);
    auto* object = reinterpret_cast<char*>(start + lead);
    set_tag(reinterpret_cast<void*>(start), lead == 0 ? slot / kTagGranule : 0);
    cursor_->bump = start + slot;  // counted when walked
    refreshWindow();
    return object;
  }

  std::uintptr_t slotStart(std::size_t lead, std::size_t alignment) const noexcept {
    return align_up(cursor_->bump + lead, alignment) - lead;
  }

  // Filler slots over [from, to): walked as slots, never handed out.
  void fill(std::uintptr_t from, std::uintptr_t to) noexcept {
    while (from < to) {
      const std::size_t slot = std::min<std::size_t>(to - from, kMaxTaggedSlot);
      set_tag(reinterpret_cast<void*>(from), slot / kTagGranule);
      ++fillers_;
      filler_bytes_ += usableOfSlot(slot);
      from += slot;
    }
  }

  void* mallocLarge(std::size_t size, std::size_t alignment) noexcept {
    // The size is bounded before its slot is taken: near SIZE_MAX it wraps.
    if (size < MaxStreamSlot && alignment <= kMaxStreamAlignment) {
      const std::size_t slot = align_up(kLargeHeaderBytes + size + 1, kTagGranule);
      if (slot <= MaxStreamSlot) {
        char* object = static_cast<char*>(place(kLargeHeaderBytes, slot, alignment));
        if (object == nullptr) return nullptr;
        LargeHeader* h = large_header_of(object);
        instrument::expose(h, sizeof(LargeHeader));
        h->slot_bytes = slot;
        h->zero_tag = 0;
        return object;
      }
    }
    return Base::mapObject(size, alignment, [this](LargeHeader* h, const void* object) {
      h->slot_bytes = 0;  // a mapping of its own
      h->zero_tag = 0;
      return getSize(object);
    });
  }

  bool lent_ = false;              // bumping through a loan (lendRun); the own run waits:
  std::uintptr_t loan_bump_ = 0;   //   where the own run stopped
  std::uintptr_t loan_run_end_ = 0;
  std::uintptr_t loan_begin_ = 0;  // while lent: where the loan starts (0 otherwise)
  // Statistics of the stream, walked up to walked_ in the current run, and
  // earlier runs' stretches not walked yet (mutable: catchUp is a read).
  struct Stretch {
    std::uintptr_t begin, end;
  };
  static constexpr std::size_t kPendingRuns = 16;
  mutable Stretch pending_[kPendingRuns] = {};
  mutable std::size_t pending_count_ = 0;
  mutable std::uintptr_t walked_ = 0;
  mutable std::size_t slots_ = 0;
  mutable std::size_t slot_bytes_ = 0;
  std::size_t fillers_ = 0;
  std::size_t filler_bytes_ = 0;
};

}  // namespace strata::layers
