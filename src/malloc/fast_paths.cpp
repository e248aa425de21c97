// malloc and free (allocate, deallocate) and their slow paths: which layer a
// request goes to, by size on malloc and by segment kind on free.
#include "fast_paths.hpp"

#include "allocator.hpp"

namespace strata::malloc_detail {

constinit PerThreadHeap g_no_heap{PerThreadHeap::NoThreadTag{}};
thread_local constinit PerThreadHeap* tl_heap __attribute__((tls_model("initial-exec"))) = &g_no_heap;
// Defined beside the free it steers (a hidden, rip-relative load there).
std::atomic<bool> g_checked{false};

void* allocate_slow(std::size_t size) noexcept {
  if (size <= cfg::kSmallMax) {
    PerThreadHeap* heap = thread_heap();
    if (!heap) return nullptr;
    void* p = heap->malloc_small(class_of(size));
    if (!p) errno = ENOMEM;
    return p;
  }
  bool zeroed;
  return allocate_big(size, cfg::kMinAlign, &zeroed);
}

namespace {
// Out of line, both: a remote free then keeps nothing across a call (no frame).
__attribute__((noinline)) void free_large(void* p) noexcept { large_free(p, large_arena(tl_heap->number)); }
__attribute__((noinline)) void free_huge_or_foreign(void* p) noexcept {
  huge_check_live(p, Use::kFree);  // also the verdict on anything that is no segment of ours
  huge_free(p);
}

}  // namespace

void deallocate_other(void* p, Page* page) noexcept {
  // The descriptor's address lies in the segment's first page: its segment.
  SegmentHeader* seg = &segment_of_page(page)->header;
  if (STRATA_LIKELY(seg->kind == SegmentKind::kSmall)) {
    free_remote(p, page);
  } else if (seg->kind == SegmentKind::kLarge) {
    free_large(p);
  } else {
    free_huge_or_foreign(p);
  }
}

std::uintptr_t g_gate_base = 0;
std::size_t g_gate_span = 0;

void open_free_gate(AddressRange range) noexcept {
  if (range.bytes == 0) return;
  g_gate_base = range.base;
  // Lo first: a free in between sees the empty gate (the slow path), never
  // the span with the old lo.
  asm volatile("" ::: "memory");
  g_gate_span = range.bytes;
}

void check_outside_gate(const void* p, Use use) noexcept {
  const auto* segment = reinterpret_cast<const void*>(segment_base(p));
  if (area_contains(segment)) return;
  // A freed huge object's header in a region stays mapped: read, it tells a
  // double free from an invalid pointer (huge_check_live reports either).
  if (in_reservation(segment)) huge_check_live(p, use);
  if (huge_freed_and_cached(p)) report_freed(use, p);
  report_invalid(use, p);
}

void deallocate_gated(void* p) noexcept {
  if (checked_mode()) {
    check_pointer(p);
  } else {
    check_outside_gate(p, Use::kFree);
  }
  deallocate_nonnull(p, reinterpret_cast<std::uintptr_t>(p));
}

void* allocate(std::size_t size) noexcept { return allocate_inline(size); }

void deallocate(void* p) noexcept { deallocate_inline(p); }

void deallocate_sized(void* p, std::size_t size, std::size_t align) noexcept {
  deallocate_sized_inline(p, size, align);  // inlined, as in free: no extra call for C++'s sized delete
}

}  // namespace strata::malloc_detail
