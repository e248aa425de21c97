// The hardened build's malloc and free (hardened.hpp): canaries, zeroing and
// verifying, the quarantine, size checks. The free-list encoding and the
// keyed freed tag live with the free lists (segment.hpp), the random slot
// choice with the owner's free (PerThreadHeap::push_local).
#include "hardened.hpp"

#include <cerrno>
#include <cstdint>

#include "allocator.hpp"
#include "fast_paths.hpp"

namespace strata::malloc_detail {

namespace {

// [[maybe_unused]]: in the default build the policies are off, so `if constexpr`
// drops every use of a policy's helper (clang warns of unneeded functions).
std::uintptr_t* slot_words(void* object) noexcept { return static_cast<std::uintptr_t*>(object); }

// The canary of the slot at `object`: the secret keyed with its own address.
[[maybe_unused]] std::uintptr_t canary_for(const std::uintptr_t* at) noexcept {
  return g_heap_secret ^ reinterpret_cast<std::uintptr_t>(at);
}
[[maybe_unused]] std::uintptr_t* canary_of(void* object, const Page* page) noexcept {
  return slot_words(object) + page->block_size / sizeof(std::uintptr_t) - 1;
}

// A freed slot is zero but for its link and tag (words 0 and 1): 16-byte
// SSE2 stores and loads from word 2 on (slots are multiples of 16 bytes), in
// loops the compiler may not turn into memset calls
// (-fno-tree-loop-distribute-patterns).
using Chunk16 = long long __attribute__((vector_size(16)));

[[maybe_unused]] void zero_body(void* object, const Page* page) noexcept {
  auto* v = static_cast<Chunk16*>(object);
  for (std::size_t i = 1, n = page->block_size / sizeof(Chunk16); i < n; ++i) v[i] = Chunk16{0, 0};
}

[[maybe_unused]] bool body_is_zero(void* object, const Page* page) noexcept {
  const auto* v = static_cast<const Chunk16*>(object);
  Chunk16 any{0, 0};
  for (std::size_t i = 1, n = page->block_size / sizeof(Chunk16); i < n; ++i) any |= v[i];
  return (any[0] | any[1]) == 0;
}

void* hand_out(void* object) noexcept {
  Page* page = reinterpret_cast<SmallSegment*>(segment_of(object))->page_of(object);
  if constexpr (cfg::kZeroOnFree) {
    if (!body_is_zero(object, page)) report_misuse("write after free of", object);
  }
  slot_words(object)[0] = 0;
  if constexpr (cfg::kCanaryBytes > 0) {
    std::uintptr_t* canary = canary_of(object, page);
    *canary = canary_for(canary);
  }
  return object;
}

// Back to its block, from whichever thread: the owner's list or the remote one.
void release_small(PerThreadHeap* heap, void* object) noexcept {
  auto* seg = reinterpret_cast<SmallSegment*>(segment_of(object));
  Page* page = seg->page_of(object);
  auto* b = static_cast<FreeBlock*>(object);
  if (seg->header.owner == heap) {
    heap->push_local(page, b);
  } else {
    push_remote_free(seg, page, b);
  }
}

[[maybe_unused]] void quarantine(PerThreadHeap* heap, void* object) noexcept {
  if (heap == &g_no_heap) return release_small(heap, object);  // a thread without a heap (exiting)
  void*& slot = heap->quarantine[heap->quarantine_next];
  void* oldest = slot;
  slot = object;
  constexpr std::size_t kRing = sizeof heap->quarantine / sizeof heap->quarantine[0];
  heap->quarantine_next = static_cast<std::uint32_t>((heap->quarantine_next + 1) % kRing);
  if (oldest) release_small(heap, oldest);
}

void free_small(SmallSegment* seg, void* p) noexcept {
  PerThreadHeap* heap = tl_heap;
  Page* page = seg->page_of(p);
  void* object = small_live_object(page, p, seg->header.owner == heap, Use::kFree);
  if constexpr (cfg::kCanaryBytes > 0) {
    std::uintptr_t* canary = canary_of(object, page);
    if (*canary != canary_for(canary)) report_misuse("heap overflow past", p);
  }
  if constexpr (cfg::kZeroOnFree) zero_body(object, page);
  static_cast<FreeBlock*>(object)->tag = freed_tag(page);
  if constexpr (cfg::kQuarantineSlots > 0) {
    quarantine(heap, object);
  } else {
    release_small(heap, object);
  }
}

// The class's front block, as allocate_inline takes from it (fresh memory,
// then the free list, whose links next_block checks), else nullptr.
void* take_from_front(std::size_t cls) noexcept {
  Page* page = tl_heap->current[cls];
  void* p;
  if (char* fresh = page->bump; fresh != page->bump_end) {
    page->bump = fresh + page->block_size;
    p = fresh;
  } else if (FreeBlock* b = page->free) {
    page->free = b->next_block();
    p = b;
  } else {
    return nullptr;
  }
  ++page->until_trigger;
  static_cast<FreeBlock*>(p)->tag = nullptr;
  return p;
}

}  // namespace

void* hardened_allocate(std::size_t size) noexcept {
  if (size <= cfg::kSmallMax - cfg::kCanaryBytes) {
    std::size_t cls = class_of(size + cfg::kCanaryBytes);
    void* p = take_from_front(cls);
    if (!p) {
      PerThreadHeap* heap = thread_heap();
      p = heap ? heap->malloc_small(cls) : nullptr;
    }
    if (!p) {
      errno = ENOMEM;
      return nullptr;
    }
    return hand_out(p);
  }
  bool zeroed;
  return allocate_big(size, cfg::kMinAlign, &zeroed);
}

void hardened_free(void* p) noexcept {
  // Nothing is read before the area map vouches for the segment: a pointer
  // strata never returned is reported, not a fault.
  if (reinterpret_cast<std::uintptr_t>(p) % cfg::kMinAlign != 0 ||
      !area_contains(reinterpret_cast<void*>(segment_base(p))))
    report_invalid(Use::kFree, p);
  SegmentHeader* seg = segment_of(p);
  if (seg->kind == SegmentKind::kSmall) return free_small(reinterpret_cast<SmallSegment*>(seg), p);
  deallocate_other(seg, p);
}

void hardened_check_size(void* p, std::size_t size, std::size_t align) noexcept {
  if (!p) return;
  if (reinterpret_cast<std::uintptr_t>(p) % cfg::kMinAlign != 0 ||
      !area_contains(reinterpret_cast<void*>(segment_base(p))))
    report_invalid(Use::kFree, p);
  std::size_t usable = usable_size(p);  // checks p itself
  // realloc may keep an object in place down to half its size; aligned
  // objects sit in bigger slots, so only the upper bound holds for them.
  bool fits = size <= usable && (align > cfg::kMinAlign || size >= usable / 2);
  if (!fits && size <= usable && segment_of(p)->kind == SegmentKind::kSmall) {
    // Small sizes whose class is this one (malloc(1) in a 16-byte class).
    Page* page = reinterpret_cast<SmallSegment*>(segment_of(p))->page_of(p);
    fits = size <= cfg::kSmallMax - cfg::kCanaryBytes && kClassSize[class_of(size + cfg::kCanaryBytes)] == page->block_size;
  }
  if (!fits) report_misuse("wrong size in sized free of", p);
}

void quarantine_flush(PerThreadHeap* heap) noexcept {
  for (void*& slot : heap->quarantine) {
    if (slot) release_small(heap, slot);
    slot = nullptr;
  }
}

}  // namespace strata::malloc_detail
