// SizedReuseHeap — ClearOptimizedHeap for a stream without tags: freed
// objects, whose size the caller gives back, are reused; pure bumping until
// something is freed.
//
// Template parameters:
//   Super      a SizedStreamHeap chain (malloc, mallocAligned, free(p, size),
//              unbumpLast, fitsRun, closeInline/openInline, streamBytes).
//   WaitBytes  freed bytes that may wait while the stream bumps on (as in
//              ClearOptimizedHeap: a free closes the inline window only once
//              this many wait).
//
// The policy is ClearOptimizedHeap's (clear_optimized_heap.hpp says why):
// the window closes once WaitBytes of freed objects wait, and reopens when
// none is left or a request none fits is bumped; the stream's last object is
// simply un-bumped. What the size at free changes: a waiting slot's length is
// known without a tag, so cutting one is free — a request takes a waiting
// slot of its own length, else the smallest at least twice as long, and the
// rest waits as a slot of its own (no loan to the stream needed).
//   * one LIFO list per slot length up to kSmallSlots granules (8-byte steps);
//   * one list per power of two above (the slot's length kept in it), a
//     request takes its own list's first slot if it fits, else one of a list
//     whose every slot fits, cut.
// kInstrumented: the links are touched through instrument::expose/hide
// (under ASan or Valgrind a freed object is hidden from everybody).
// Limits: no coalescing; aligned requests do not reuse; not thread safe.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

#include "strata/layers/region/detail/instrument.hpp"
#include "strata/layers/region/detail/masked_lists.hpp"
#include "strata/layers/region/sized_stream_heap.hpp"
#include "strata/layers/region/tagged_stream_heap.hpp"  // kInlineClosedFreed

namespace strata::layers {

template <class Super, std::size_t WaitBytes = 0>
class SizedReuseHeap : public Super {
  static constexpr std::size_t kSmallSlots = 256;  // lists by granules: slots up to 2 KiB
  static constexpr std::size_t kMaxSmallSlot = kSmallSlots * kSizedGranule;
  static constexpr std::size_t kLargeLists = 64;  // by floor(log2(slot bytes))

 public:
  template <bool kInstrumented = false>
  void* malloc(std::size_t size) noexcept {
    if (waiting_ != 0) {
      if constexpr (WaitBytes != 0)
        if ((Super::cursor().flags & kInlineClosedFreed) == 0) [[unlikely]]
          return bumpWhileWaiting<kInstrumented>(size);
      return reuse<kInstrumented>(size);
    }
    return Super::malloc(size);
  }

  // ptr of `size` bytes (as allocated).
  template <bool kInstrumented = false>
  void free(void* ptr, std::size_t size) noexcept {
    if (!sized_in_stream(size)) [[unlikely]]
      return Super::free(ptr, size);
    const std::size_t slot = sized_slot_taken(size);
    if (Super::unbumpLast(ptr, slot)) return;
    addWaiting<kInstrumented>(static_cast<FreeSlot*>(ptr), slot);
    ++waiting_;
    if (freed_bytes_ >= WaitBytes) Super::closeInline(kInlineClosedFreed);
  }

  void clear() noexcept {
    if (waiting_ == 0 && Super::untouched()) return;
    small_.clear();
    large_.clear();
    waiting_ = freed_bytes_ = 0;
    Super::openInline(kInlineClosedFreed);
    Super::clear();
  }

  // Bytes of the slots handed out and not freed.
  std::size_t liveBytes() const noexcept { return Super::streamBytes() - freed_bytes_; }
  std::size_t waitingObjects() const noexcept { return waiting_; }

 private:
  struct FreeSlot {
    FreeSlot* next;
    std::size_t bytes;  // large lists only (their slots are at least 2 KiB)
  };

  template <bool kInstrumented>
  void addWaiting(FreeSlot* slot, std::size_t bytes) noexcept {
    if (bytes <= kMaxSmallSlot) {
      small_.template push<kInstrumented>(bytes / kSizedGranule, slot);
    } else {
      setSlotBytes<kInstrumented>(slot, bytes);
      large_.template push<kInstrumented>(static_cast<std::size_t>(std::bit_width(bytes)) - 1, slot);
    }
    freed_bytes_ += bytes;
  }

  // The first waiting slot of exactly `granules` (fast), else the rest.
  template <bool kInstrumented>
  void* reuse(std::size_t size) noexcept {
    // The size, not its slot, is bounded first: a size near SIZE_MAX has no slot.
    if (size <= kMaxSmallSlot) {
      const std::size_t granules = sized_slot_taken(size) / kSizedGranule;
      if (!small_.empty(granules)) {
        void* object = popSmall<kInstrumented>(granules);
        if (waiting_ == 0) Super::openInline(kInlineClosedFreed);  // back to pure bumping
        return object;
      }
    }
    return reuseOrBump<kInstrumented>(size);
  }

  template <bool kInstrumented>
  [[gnu::noinline]] void* bumpWhileWaiting(std::size_t size) noexcept {
    if (Super::fitsRun(size)) return Super::malloc(size);
    return reuse<kInstrumented>(size);
  }

  // No waiting slot of exactly this length: a longer one cut, or the
  // stream, which then bumps inline until the next free (as ClearOptimizedHeap).
  template <bool kInstrumented>
  [[gnu::noinline]] void* reuseOrBump(std::size_t size) noexcept {
    if (sized_in_stream(size)) {
      const std::size_t slot = sized_slot_taken(size);
      if (void* reused = takeLonger<kInstrumented>(slot)) {
        if (waiting_ == 0) Super::openInline(kInlineClosedFreed);
        return reused;
      }
    }
    void* bumped = Super::malloc(size);
    Super::openInline(kInlineClosedFreed);
    return bumped;
  }

  template <bool kInstrumented>
  void* popSmall(std::size_t granules) noexcept {
    FreeSlot* slot = small_.template pop<kInstrumented>(granules);
    freed_bytes_ -= granules * kSizedGranule;
    --waiting_;
    return slot;
  }

  // The smallest waiting slot at least twice `slot` bytes (a small one), or
  // any large one that holds it; cut, the rest waiting again.
  template <bool kInstrumented>
  void* takeLonger(std::size_t slot) noexcept {
    std::size_t found_bytes = 0;
    char* found = nullptr;
    if (2 * slot <= kMaxSmallSlot) {
      const std::size_t granules = small_.firstFrom(2 * slot / kSizedGranule);
      if (granules != small_.kNone) {
        found = static_cast<char*>(popSmall<kInstrumented>(granules));
        found_bytes = granules * kSizedGranule;
      }
    }
    if (found == nullptr) {
      // sized_slot_taken's slot is at least a granule; gcc's TSan build, not
      // told, sees list -1 (bit_width(0) - 1) and fails -Warray-bounds.
      if (slot < kSizedGranule) __builtin_unreachable();
      std::size_t list = static_cast<std::size_t>(std::bit_width(slot)) - 1;
      // Its own list's first slot may fit; every slot of the lists above does.
      if (large_.empty(list) || slotBytes<kInstrumented>(large_.front(list)) < slot) {
        list = large_.firstFrom(list + 1);
        if (list == large_.kNone) return nullptr;
      }
      found_bytes = slotBytes<kInstrumented>(large_.front(list));
      found = reinterpret_cast<char*>(large_.template pop<kInstrumented>(list));
      freed_bytes_ -= found_bytes;
      --waiting_;
    }
    if (found_bytes > slot) {  // the rest waits as a slot of its own
      addWaiting<kInstrumented>(reinterpret_cast<FreeSlot*>(found + slot), found_bytes - slot);
      ++waiting_;
    }
    return found;
  }

  template <bool kInstrumented>
  static std::size_t slotBytes(FreeSlot* slot) noexcept {
    if constexpr (kInstrumented) instrument::expose(slot, sizeof(FreeSlot));
    const std::size_t bytes = slot->bytes;
    if constexpr (kInstrumented) instrument::hide(slot, sizeof(FreeSlot));
    return bytes;
  }
  template <bool kInstrumented>
  static void setSlotBytes(FreeSlot* slot, std::size_t bytes) noexcept {
    if constexpr (kInstrumented) instrument::expose(slot, sizeof(FreeSlot));
    slot->bytes = bytes;
    if constexpr (kInstrumented) instrument::hide(slot, sizeof(FreeSlot));
  }

  std::size_t waiting_ = 0;
  std::size_t freed_bytes_ = 0;
  detail::MaskedLists<FreeSlot, kSmallSlots + 1> small_;  // by granules
  detail::MaskedLists<FreeSlot, kLargeLists> large_;
};

}  // namespace strata::layers
