// malloc's and free's fast paths, inline: fast_paths.cpp gives them their
// names (allocate, deallocate), c_semantics.cpp inlines the same bodies into
// calloc, realloc and aligned allocation, and libstrata.so's override inlines
// them into malloc, free, operator new and delete themselves (no jump from the
// exported name to the fast path).
//
// A malloc of a small size is a thread-local load, a table lookup and a
// free-list pop (or a pointer bump); a free of the thread's own small object is a mask, a compare
// and a push. Everything else leaves through a noinline slow path.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "checked.hpp"
#include "config.hpp"
#include "hardened.hpp"
#include "huge_heap.hpp"
#include "large_heap.hpp"
#include "per_thread_heap.hpp"
#include "segment.hpp"
#include "size_classes.hpp"

#define STRATA_LIKELY(x) __builtin_expect(!!(x), 1)
#define STRATA_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace strata::malloc_detail {

// The heap of threads without one (see PerThreadHeap::NoThreadTag). Hidden:
// the address compare in thread_heap() stays a rip-relative lea.
extern PerThreadHeap g_no_heap __attribute__((visibility("hidden")));

// The calling thread's heap, &g_no_heap until its first allocation claims one.
// initial-exec: a plain %fs-relative load, and no call into the dynamic loader
// (which could itself call malloc). constinit: no TLS wrapper call in the
// files that only declare it.
extern thread_local constinit PerThreadHeap* tl_heap __attribute__((tls_model("initial-exec"), visibility("hidden")));

constexpr std::size_t kMaxRequest = std::size_t{1} << 62;  // beyond: ENOMEM without asking the OS

// The calling thread's heap; claims one on its first allocation (startup.cpp).
PerThreadHeap* claim_thread_heap() noexcept;
// The thread's heap was given up at its exit (startup.cpp, on_thread_exit).
extern thread_local constinit bool tl_heap_given_up __attribute__((tls_model("initial-exec"), visibility("hidden")));
inline PerThreadHeap* thread_heap() noexcept {
  if (PerThreadHeap* heap = tl_heap; heap != &g_no_heap) return heap;
  return claim_thread_heap();
}

// malloc of anything the fast path cannot serve (fast_paths.cpp).
__attribute__((noinline)) void* allocate_slow(std::size_t size) noexcept;
// free() of anything but an object of the calling thread's own small blocks.
// page: SmallSegment::page_at of p's low bits in p's segment, whatever its
// kind (an address inside the segment's first page, which names the segment
// too): the fast path has it in a register, in the argument's place.
__attribute__((noinline)) void deallocate_other(void* p, Page* page) noexcept;

inline bool fits_large(std::size_t size, std::size_t align) noexcept {
  return size <= cfg::kLargeMax && (align <= cfg::kMinAlign || size + align <= cfg::kLargeMax);
}

// Objects above kSmallMax (or over-aligned ones): the large arenas, else huge.
// *zeroed: whether the memory is known to be zero (fresh pages).
inline void* allocate_big(std::size_t size, std::size_t align, bool* zeroed) noexcept {
  if (size > kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  if (fits_large(size, align)) {
    *zeroed = false;
    void* p = large_malloc(large_arena(tl_heap->number), size, align);
    if (!p) errno = ENOMEM;
    return p;
  }
  return huge_malloc(size, align, zeroed);
}

// The one small-object fast path, in every build: a slot of the class whose
// front block is `page`. The block's free list first (a block that churns
// serves every malloc from it), then its open fresh memory: one test on the
// common path. nullptr when both are empty (the slow path refills).
inline __attribute__((always_inline)) void* take_slot(Page* page) noexcept {
  if (FreeBlock* b = page->free; STRATA_LIKELY(b != nullptr)) {
    page->free = b->next_block();
    ++page->used_minus_trigger;
    b->tag = nullptr;
    return b;
  }
  if (char* p = page->bump; STRATA_LIKELY(p != page->bump_end)) {
    page->bump = p + page->block_size;
    ++page->used_minus_trigger;
    reinterpret_cast<FreeBlock*>(p)->tag = nullptr;  // a reused block's memory holds old tags
    return p;
  }
  return nullptr;
}

// The class whose slots hold `size` bytes (and the canary, cfg::kCanaryBytes),
// as by_size indexes it; size <= cfg::kSmallMax - cfg::kCanaryBytes.
inline std::size_t size_slot(std::size_t size) noexcept {
  return (size + cfg::kCanaryBytes + cfg::kMinAlign - 1) / cfg::kMinAlign;
}

inline __attribute__((always_inline)) void* allocate_inline(std::size_t size) noexcept {
  // The hardened policies wrap take_slot (hardened.cpp): canary, checks.
  if constexpr (cfg::kHardened) return hardened_allocate(size);
  if (STRATA_LIKELY(size <= cfg::kSmallMax)) {
    if (void* p = take_slot(tl_heap->by_size[size_slot(size)]); STRATA_LIKELY(p != nullptr)) return p;
  }
  return allocate_slow(size);
}

// The body of free() once p is known not to be NULL and to have a readable
// segment header. low_bits: any value with p's low kSegmentShift bits (the
// free gate's p - g_gate_base, which is free once the gate is passed: the page
// index is read from it without a copy of p).
inline __attribute__((always_inline)) void deallocate_nonnull(void* p, std::uintptr_t low_bits) noexcept {
  SegmentHeader* seg = segment_of(p);
  PerThreadHeap* heap = tl_heap;
  // Computed before the kind is known: the other paths take it too.
  Page* page = reinterpret_cast<SmallSegment*>(seg)->page_at(low_bits);
  // Only a small segment has an owner, and tl_heap is never nullptr: a match
  // proves both the kind and the ownership in one compare. A thread without a
  // heap (new or exiting) has &g_no_heap, which owns nothing: the remote path.
  if (STRATA_LIKELY(seg->owner == heap)) {
    auto* b = static_cast<FreeBlock*>(p);
    // The checks every build makes, on what free reads anyway: p starts a slot
    // (slot_magic is 0 for blocks of aligned objects and blocks not in use,
    // which the slow path sorts out), one malloc has handed out (below the
    // bump pointer) and is not tagged freed already.
    if (STRATA_LIKELY(page->is_slot_start(p) && static_cast<char*>(p) < page->bump && b->tag != page)) {
      b->set_next(page->free);
      // Two plain stores: without the barrier GCC pairs them into a vector
      // store that costs four instructions.
      asm("" ::: "memory");
      b->tag = freed_tag(page);
      page->free = b;
      // (The class's current block never meets its trigger: sync_current.)
      if (STRATA_UNLIKELY(--page->used_minus_trigger == 0)) heap->on_trigger(page);
      return;
    }
    heap->free_local_slow(page, p);
    return;
  }
  deallocate_other(p, page);
}

// The free gate: free() reads the segment header of p (at segment_of(p), the
// segment of p - 1) only when p - g_gate_base < g_gate_span, that is, when p lies
// in the segment range (os.hpp), where every address can be read (and the
// segment before it, for p at its start). NULL wraps around to a huge value:
// one subtract and one compare test for NULL, for checked mode and for a
// pointer that is no one's but ours. g_gate_base is segment-aligned, so
// p - g_gate_base keeps p's low bits (deallocate_nonnull's low_bits). The gate is
// empty (span 0) until start-up opens it (open_free_gate), in checked mode and
// where no range could be reserved: every pointer then takes deallocate_gated.
// Plain, not atomic: written once at start-up, and plain loads fold into the
// subtract and the compare.
extern std::uintptr_t g_gate_base __attribute__((visibility("hidden")));
extern std::size_t g_gate_span __attribute__((visibility("hidden")));
inline bool in_free_gate(const void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) - g_gate_base < g_gate_span;
}
// Start-up, unless in checked mode: the gate lets the range's pointers through.
void open_free_gate(AddressRange range) noexcept;

// A non-NULL pointer outside the gate is ours only if the area map knows its
// segment (a huge object, a segment mapped outside the range); else the call
// reports it ("invalid free of 0x...") and aborts before reading anything at it.
void check_outside_gate(const void* p, Use use) noexcept;
// realloc and malloc_usable_size: the same gate before they read a header.
inline void check_gate(const void* p, Use use) noexcept {
  if (STRATA_UNLIKELY(!in_free_gate(p))) check_outside_gate(p, use);
}
// free() of a non-NULL pointer outside the gate (every free in checked mode).
__attribute__((noinline)) void deallocate_gated(void* p) noexcept;

// The body of free(), inlined into every entry point (free, operator delete):
// no call from the exported name to the fast path.
inline __attribute__((always_inline)) void deallocate_inline(void* p) noexcept {
  if constexpr (cfg::kHardened) return hardened_free(p);  // NULL included
  std::uintptr_t gated = reinterpret_cast<std::uintptr_t>(p) - g_gate_base;
  if (cfg::kAlwaysChecked || STRATA_UNLIKELY(gated >= g_gate_span)) {
    if (p) deallocate_gated(p);
    return;
  }
  deallocate_nonnull(p, gated);
}

// free_sized, free_aligned_sized, sized operator delete.
inline __attribute__((always_inline)) void deallocate_sized_inline(void* p, std::size_t size, std::size_t align) noexcept {
  if constexpr (cfg::kCheckSizes) {
    if (align <= cfg::kMinAlign) return hardened_free_sized(p, size);
    hardened_check_size(p, size, align);
  }
  (void)size;
  (void)align;
  deallocate_inline(p);
}

}  // namespace strata::malloc_detail
