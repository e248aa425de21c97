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
    for (std::size_t word = 0; word < kSmallWords; ++word) {
      for (std::uint64_t bits = small_mask_[word]; bits != 0; bits &= bits - 1)
        small_[word * 64 + static_cast<std::size_t>(std::countr_zero(bits))] = nullptr;
      small_mask_[word] = 0;
    }
    for (std::uint64_t bits = large_mask_; bits != 0; bits &= bits - 1)
      large_[static_cast<std::size_t>(std::countr_zero(bits))] = nullptr;
    large_mask_ = 0;
    waiting_ = freed_bytes_ = 0;
    Super::openInline(kInlineClosedFreed);
    Super::clear();
  }

  // Bytes of the slots handed out and not freed.
  std::size_t liveBytes() const noexcept { return Super::streamBytes() - freed_bytes_; }
  std::size_t waitingObjects() const noexcept { return waiting_; }

 private:
  static constexpr std::size_t kSmallWords = (kSmallSlots + 1 + 63) / 64;
  struct FreeSlot {
    FreeSlot* next;
    std::size_t bytes;  // large lists only (their slots are at least 2 KiB)
  };

  template <bool kInstrumented>
  static void push(FreeSlot*& list, FreeSlot* slot, std::size_t bytes) noexcept {
    const std::size_t link = bytes > kMaxSmallSlot ? sizeof(FreeSlot) : sizeof(FreeSlot*);
    if constexpr (kInstrumented) instrument::expose(slot, link);
    slot->next = list;
    if (bytes > kMaxSmallSlot) slot->bytes = bytes;
    if constexpr (kInstrumented) instrument::hide(slot, link);
    list = slot;
  }
  template <bool kInstrumented>
  static FreeSlot* pop(FreeSlot*& list, std::size_t* bytes = nullptr) noexcept {
    FreeSlot* slot = list;
    const std::size_t link = bytes != nullptr ? sizeof(FreeSlot) : sizeof(FreeSlot*);
    if constexpr (kInstrumented) instrument::expose(slot, link);
    list = slot->next;
    if (bytes != nullptr) *bytes = slot->bytes;
    if constexpr (kInstrumented) instrument::hide(slot, link);
    return slot;
  }

  template <bool kInstrumented>
  void addWaiting(FreeSlot* slot, std::size_t bytes) noexcept {
    if (bytes <= kMaxSmallSlot) {
      const std::size_t granules = bytes / kSizedGranule;
      push<kInstrumented>(small_[granules], slot, bytes);
      small_mask_[granules / 64] |= std::uint64_t{1} << (granules % 64);
    } else {
      const std::size_t list = static_cast<std::size_t>(std::bit_width(bytes)) - 1;
      push<kInstrumented>(large_[list], slot, bytes);
      large_mask_ |= std::uint64_t{1} << list;
    }
    freed_bytes_ += bytes;
  }

  // The first waiting slot of exactly `granules` (fast), else the rest.
  template <bool kInstrumented>
  void* reuse(std::size_t size) noexcept {
    // The size, not its slot, is bounded first: a size near SIZE_MAX has no slot.
    if (size <= kMaxSmallSlot) {
      const std::size_t granules = sized_slot_taken(size) / kSizedGranule;
      if (small_[granules] != nullptr) {
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
    FreeSlot* slot = pop<kInstrumented>(small_[granules]);
    if (small_[granules] == nullptr) small_mask_[granules / 64] &= ~(std::uint64_t{1} << (granules % 64));
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
      const std::size_t least = 2 * slot / kSizedGranule;
      std::size_t word = least / 64;
      std::uint64_t bits = small_mask_[word] & (~std::uint64_t{0} << (least % 64));
      while (bits == 0 && ++word < kSmallWords) bits = small_mask_[word];
      if (bits != 0) {
        const std::size_t granules = word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
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
      if (large_[list] == nullptr || slotBytes<kInstrumented>(large_[list]) < slot) {
        const std::uint64_t bits = list + 1 < kLargeLists ? large_mask_ & (~std::uint64_t{0} << (list + 1)) : 0;
        if (bits == 0) return nullptr;
        list = static_cast<std::size_t>(std::countr_zero(bits));
      }
      found = reinterpret_cast<char*>(pop<kInstrumented>(large_[list], &found_bytes));
      if (large_[list] == nullptr) large_mask_ &= ~(std::uint64_t{1} << list);
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

  FreeSlot* small_[kSmallSlots + 1] = {};
  FreeSlot* large_[kLargeLists] = {};
  std::uint64_t small_mask_[kSmallWords] = {};
  std::uint64_t large_mask_ = 0;
  std::size_t waiting_ = 0;
  std::size_t freed_bytes_ = 0;
};

}  // namespace strata::layers
