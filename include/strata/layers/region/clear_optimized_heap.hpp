// ClearOptimizedHeap — reuse freed objects; pure bumping until something is freed.
//
// Template parameters:
//   Super      a TaggedStream (concepts.hpp): a TaggedStreamHeap chain
//              (tag_of / large_header_of find an object's size; closeInline /
//              openInline switch its inline window; catchUp / noteShrunk keep
//              its statistics).
//   WaitBytes  freed bytes that may wait while the stream bumps on (0: none,
//              the paper's policy). A free closes the window only once this
//              many bytes wait; before that the stream keeps bumping inline,
//              and waiting objects are reused when a request would need the
//              stream's next run. A program that frees and allocates one
//              object at a time otherwise closes and opens the window at every
//              free, and takes every allocation out of line. The price: up to
//              WaitBytes more memory touched.
//
// The 2002 reaps paper's ClearOptimizedHeap keeps one flag, "no memory freed",
// and allocates by bumping a pointer while it holds; after a free it allocates
// from a second heap. Here the flag is the inline window: the first free (with
// WaitBytes, the free that makes WaitBytes wait) closes it (kInlineClosedFreed),
// so every allocation comes here and takes a freed object first; when no freed object is left, the window opens again and the
// stream bumps. A request no waiting object fits opens the window too, until
// the next free: objects of sizes the program never asks for again would
// otherwise send every allocation out of line. clear() forgets the freed
// objects, so a cleared heap is pure bumping.
//
// Freed objects wait on LIFO lists (the link lives in the object itself):
//   * one list per slot length up to 4080 bytes (255 lists, 16-byte steps).
//     A request takes a waiting slot of exactly its length, else the
//     smallest one at least twice as long (a 256-bit mask: at most four
//     words to scan), cut, and its rest lent to the stream (lendRun): the
//     inline window spans it, so the next requests bump through it instead
//     of one split each; the first request it cannot hold hands back what is
//     left, which waits as a slot of its own. A slot less than twice the
//     request waits for a request of its own length: handed out whole it
//     would keep the window closed for the requests after it, and cut, its
//     rest would wait for a request as small. Constant time, no coalescing.
//   * one list per power of two for larger slots; a request takes the first
//     slot of its own list if it fits, else one of a list whose every slot
//     fits (no split).
// kInstrumented: the links are touched through instrument::expose/hide,
// because under ASan or Valgrind a freed object is hidden from everybody.
// Limits: no coalescing (clear() resets everything); aligned requests above
// 16 bytes are not served from freed objects; not thread safe.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

#include "strata/layers/region/concepts.hpp"
#include "strata/layers/region/detail/masked_lists.hpp"
#include "strata/layers/region/tagged_stream_heap.hpp"

namespace strata::layers {

template <TaggedStream Super, std::size_t WaitBytes = 0>
class ClearOptimizedHeap : public Super {
  static constexpr std::size_t kSmallLists = 256;  // index: slot granules (1..255)
  static constexpr std::size_t kLargeLists = 64;   // index: floor(log2(slot bytes))

 public:
  template <bool kInstrumented = false>
  void* malloc(std::size_t size) noexcept {
    if (Super::lent()) return afterLoan<kInstrumented>(size);
    if (waiting_ != 0) {
      // Fewer than WaitBytes wait (the window is open): the stream bumps on.
      if constexpr (WaitBytes != 0)
        if ((Super::cursor().flags & kInlineClosedFreed) == 0) [[unlikely]]
          return bumpWhileWaiting<kInstrumented>(size);
      return reuse<kInstrumented>(size);
    }
    return Super::template malloc<kInstrumented>(size);
  }

  template <bool kInstrumented = false>
  void free(void* ptr) noexcept {
    // No catchUp() here: a freed object the statistics have not walked yet is
    // walked (once, with its tag unchanged) when they next ask; only a split
    // changes tags, and takeSmall catches up before it splits.
    const std::size_t granules = tag_of<kInstrumented>(ptr);
    if (granules == 0) [[unlikely]]
      return freeLarge<kInstrumented>(ptr);
    // The stream's last object is simply un-bumped, as an obstack frees its
    // top: nothing waits, and the inline window stays open.
    if (Super::unbumpLast(ptr, granules * kTagGranule)) return;
    addWaitingSmall<kInstrumented>(static_cast<FreeObject*>(ptr), granules);
    noteWaiting();
  }

  // Aligned requests bump the stream's own run (a loan is handed back first).
  void* mallocAligned(std::size_t size, std::size_t alignment) noexcept {
    if (Super::lent()) returnLoan<true>();
    return Super::mallocAligned(size, alignment);
  }

  void clear() noexcept {
    // A heap nothing was allocated from since the last clear has nothing to
    // forget (a clear reaches a whole tree of reaps, mostly empty ones).
    if (waiting_ == 0 && Super::untouched()) return;
    small_.clear();  // a round without frees clears nothing here
    large_.clear();
    waiting_ = freed_bytes_ = 0;
    Super::openInline(kInlineClosedFreed);
    Super::clear();
  }

  // Objects handed out and not freed, and their usable bytes.
  std::size_t liveObjects() const noexcept {
    Super::catchUp();
    return Super::streamObjects() - waiting_;
  }
  std::size_t liveBytes() const noexcept {
    Super::catchUp();
    return Super::streamBytes() - freed_bytes_;
  }
  // Freed objects waiting for reuse.
  std::size_t waitingObjects() const noexcept { return waiting_; }

 private:
  struct FreeObject {
    FreeObject* next;
  };

  // A waiting object first. An exact fit: the common case of a program that
  // frees and allocates the same sizes, in a handful of instructions and no
  // frame.
  template <bool kInstrumented>
  void* reuse(std::size_t size) noexcept {
    const std::size_t slot = tagged_slot_of(size);
    const std::size_t granules = slot / kTagGranule;
    if (slot - 1 < kMaxTaggedSlot && !small_.empty(granules)) return takeExact<kInstrumented>(granules);
    return reuseOrBump<kInstrumented>(size);
  }

  // Objects wait, fewer than WaitBytes: the stream bumps on while its run
  // holds the request; after that the waiting objects come first, before the
  // stream asks for more memory. Out of line: an open window makes the
  // unchecked reap come here only at the end of a run or for a large object.
  template <bool kInstrumented>
  [[gnu::noinline]] void* bumpWhileWaiting(std::size_t size) noexcept {
    if (Super::fitsRun(size)) return Super::template malloc<kInstrumented>(size);
    return reuse<kInstrumented>(size);
  }

  // Freed objects wait but none of exactly this size: a bigger one split, or
  // the stream. Out of line, so that the exact fit above needs no stack frame.
  template <bool kInstrumented>
  [[gnu::noinline]] void* reuseOrBump(std::size_t size) noexcept {
    const std::size_t slot = tagged_slot_of(size);
    if (slot - 1 < kMaxTaggedSlot) {
      if (void* reused = takeSmall<kInstrumented>(slot / kTagGranule)) return reused;
      // Nothing waiting is this long or twice as long: bump, and keep bumping
      // inline until the next free — waiting objects no request asks for
      // again would otherwise send every allocation here.
      void* bumped = Super::template malloc<kInstrumented>(size);
      Super::openInline(kInlineClosedFreed);
      return bumped;
    } else if (size <= SIZE_MAX / 4) {
      if (void* reused = takeLarge<kInstrumented>(align_up(kLargeHeaderBytes + size + 1, kTagGranule)))
        return reused;
    }
    return Super::template malloc<kInstrumented>(size);
  }

  // A request while the stream bumps through a loan (the rest of a split
  // slot): served from the loan if it fits; else what is left of the loan
  // waits like any freed slot and the request is served as if there had
  // been no loan.
  template <bool kInstrumented>
  [[gnu::noinline]] void* afterLoan(std::size_t size) noexcept {
    if (Super::fitsRun(size)) return Super::template malloc<kInstrumented>(size);
    returnLoan<kInstrumented>();
    return malloc<kInstrumented>(size);
  }

  template <bool kInstrumented>
  void returnLoan() noexcept {
    std::size_t bytes = 0;
    if (void* rest = Super::template endLoan<kInstrumented>(&bytes)) {
      addWaitingSmall<kInstrumented>(static_cast<FreeObject*>(rest), bytes / kTagGranule);
      ++waiting_;
    }
    if (waiting_ != 0 && freed_bytes_ >= WaitBytes) Super::closeInline(kInlineClosedFreed);
  }

  // Out of line, so that the small-object free above needs no stack frame.
  template <bool kInstrumented>
  [[gnu::noinline]] void freeLarge(void* ptr) noexcept {
    const LargeHeader* h = large_header_of(ptr);
    if (h->slot_bytes == 0) return Super::free(ptr);  // its own mapping goes back
    large_.template push<kInstrumented>(std::bit_width(h->slot_bytes) - 1, static_cast<FreeObject*>(ptr));
    freed_bytes_ += h->slot_bytes - kLargeHeaderBytes - 1;
    noteWaiting();
  }

  // A slot of `granules` joins its list of waiting objects.
  template <bool kInstrumented>
  void addWaitingSmall(FreeObject* object, std::size_t granules) noexcept {
    small_.template push<kInstrumented>(granules, object);
    freed_bytes_ += granules * kTagGranule - 1;
  }

  void noteWaiting() noexcept {
    // Freed memory goes first now (after a loan: returnLoan closes the window).
    ++waiting_;
    if (!Super::lent() && freed_bytes_ >= WaitBytes) Super::closeInline(kInlineClosedFreed);
  }

  // The first waiting slot of exactly `granules` (its list is not empty).
  template <bool kInstrumented>
  void* takeExact(std::size_t granules) noexcept {
    FreeObject* object = popSlot<kInstrumented>(granules);
    if (waiting_ == 0) Super::openInline(kInlineClosedFreed);  // back to pure bumping
    return object;
  }

  // The smallest waiting small slot of at least twice `granules`, cut to
  // size, its rest lent to the stream (the next requests bump through it,
  // inline unless the reap is checked, instead of one split each); nullptr
  // when none waits. A slot less than twice the request is left waiting for
  // a request of its own size: handed out whole it would keep the window
  // closed for the next requests (docs/benchmarks-choices.md, "Small slots
  // cut in two"), and cut, its rest would wait for a request as small.
  template <bool kInstrumented>
  void* takeSmall(std::size_t granules) noexcept {
    const std::size_t found = small_.firstFrom(2 * granules);
    if (found == small_.kNone) return nullptr;
    return lendRest<kInstrumented>(popSlot<kInstrumented>(found), found, granules);
  }

  // Takes the first slot of the (non-empty) list of `granules`; the caller
  // opens the inline window if nothing waits any more.
  template <bool kInstrumented>
  FreeObject* popSlot(std::size_t granules) noexcept {
    FreeObject* object = small_.template pop<kInstrumented>(granules);
    freed_bytes_ -= granules * kTagGranule - 1;
    --waiting_;
    return object;
  }

  // Cut a slot of `found` granules to `granules` and lend the rest to the
  // stream: the inline window opens over it.
  template <bool kInstrumented>
  [[gnu::noinline]] void* lendRest(FreeObject* object, std::size_t found, std::size_t granules) noexcept {
    Super::catchUp();  // the statistics count the slot whole before it is cut
    set_tag<kInstrumented>(object, granules);
    Super::noteShrunk(found * kTagGranule, granules * kTagGranule);
    Super::lendRun(reinterpret_cast<char*>(object) + granules * kTagGranule, (found - granules) * kTagGranule);
    Super::openInline(kInlineClosedFreed);
    return object;
  }

  // A waiting large slot of at least slot_bytes (whole: no split).
  template <bool kInstrumented>
  void* takeLarge(std::size_t slot_bytes) noexcept {
    std::size_t list = std::bit_width(slot_bytes) - 1;  // the list slot_bytes itself belongs to:
    FreeObject* head = large_.front(list);              // its first slot may fit
    if (head == nullptr || large_header_of(head)->slot_bytes < slot_bytes) {
      list = large_.firstFrom(list + 1);  // every slot of these lists fits
      if (list == large_.kNone) return nullptr;
    }
    FreeObject* object = large_.template pop<kInstrumented>(list);
    freed_bytes_ -= large_header_of(object)->slot_bytes - kLargeHeaderBytes - 1;
    if (--waiting_ == 0) Super::openInline(kInlineClosedFreed);
    return object;
  }

  std::size_t waiting_ = 0;  // freed objects (and split rests) on the lists
  std::size_t freed_bytes_ = 0;
  detail::MaskedLists<FreeObject, kSmallLists> small_;
  detail::MaskedLists<FreeObject, kLargeLists> large_;
};

}  // namespace strata::layers
