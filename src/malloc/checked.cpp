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

void check_pointer(void* p, bool freeing) noexcept {
  if (reinterpret_cast<std::uintptr_t>(p) % sizeof(void*) != 0 || !area_contains(reinterpret_cast<void*>(segment_base(p))))
    report_misuse("free(): pointer was not allocated by strata:", p);
  SegmentHeader* seg = segment_of(p);
  switch (seg->kind) {
    case SegmentKind::kSmall: {
      auto* small = reinterpret_cast<SmallSegment*>(seg);
      check_small_free(small, small->page_of(p), p, small->header.owner == tl_heap, freeing);
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
