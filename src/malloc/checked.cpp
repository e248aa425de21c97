// Checked mode (checked.hpp): the pointer check every free and realloc makes
// when STRATA_CHECK=1, and the report of what it found.
#include "checked.hpp"

#include <cstdint>
#include <cstdlib>

#include "fast_paths.hpp"
#include "report.hpp"

namespace strata::malloc_detail {

void report_misuse(const char* what, const void* p) noexcept {
  Report().str("strata: ").str(what).put(' ').ptr(p).put('\n');
  std::abort();
}

void report_corrupt_free_list(const FreeBlock* at) noexcept { report_misuse("corrupted free list at", at); }

void report_freed(Use use, const void* p) noexcept {
  switch (use) {
    case Use::kFree: report_misuse("double free of", p);
    case Use::kRealloc: report_misuse("realloc of freed", p);
    case Use::kUsableSize: break;
  }
  report_misuse("malloc_usable_size of freed", p);
}

void report_invalid(Use use, const void* p) noexcept {
  switch (use) {
    case Use::kFree: report_misuse("invalid free of", p);
    case Use::kRealloc: report_misuse("invalid realloc of", p);
    case Use::kUsableSize: break;
  }
  report_misuse("invalid malloc_usable_size of", p);
}

void check_pointer(void* p) noexcept {
  if (reinterpret_cast<std::uintptr_t>(p) % sizeof(void*) != 0 || !area_contains(reinterpret_cast<void*>(segment_base(p)))) {
    if (huge_freed_and_cached(p)) report_freed(Use::kFree, p);
    report_misuse("free(): pointer was not allocated by strata:", p);
  }
  SegmentHeader* seg = segment_of(p);
  switch (seg->kind) {
    case SegmentKind::kSmall: {
      auto* small = reinterpret_cast<SmallSegment*>(seg);
      check_small_free(small, small->page_of(p), p, small->header.owner == tl_heap);
      return;
    }
    case SegmentKind::kLarge:
      large_check(p);
      return;
    case SegmentKind::kHuge:
      return;
  }
  report_misuse("free(): pointer is not a live object (double free of a huge object, or invalid):", p);
}

}  // namespace strata::malloc_detail
