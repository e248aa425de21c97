// Huge objects (> kLargeMax): straight from the OS, one mapping each (Vam's
// "extremely large" objects). The mapping starts with a segment header, so
// free() finds it like any other segment. Freed mappings go to a cache of
// resident runs of pages (kHugeCacheBytes, kHugeCacheEntries): a request
// reuses a run where it is, or has the kernel move cached pages into its new
// mapping (mremap), so that a program that allocates, grows and frees big
// buffers does not pay a page fault per page each turn (issue 12's `large`).
// What does not fit in the cache is unmapped at once.
#pragma once
#include <cstddef>

namespace strata::malloc_detail {

// nullptr + ENOMEM. align: a power of two >= 16. *zeroed tells whether the
// memory is known to be zero (fresh from the OS).
void* huge_malloc(std::size_t size, std::size_t align, bool* zeroed) noexcept;
void huge_free(void* p) noexcept;
std::size_t huge_usable_size(const void* p) noexcept;
// In place (shrinking unmaps the tail), or false.
bool huge_resize(void* p, std::size_t size) noexcept;
// Grow by moving the pages (mremap), not the bytes: a new aligned place, the
// old pages moved there by the kernel, cached pages (or fresh ones) behind.
// nullptr if it cannot.
void* huge_move(void* p, std::size_t size) noexcept;

struct HugeStats {
  std::size_t live_objects = 0;
  std::size_t live_bytes = 0;   // mapped for live objects
  std::size_t cached_bytes = 0;
  std::size_t cache_entries = 0;
  std::size_t reused_bytes = 0;  // cached pages handed out again, in total
  std::size_t moved_bytes = 0;   // pages moved by mremap (from the cache, or by a realloc)
};
HugeStats huge_stats() noexcept;

void huge_lock() noexcept;  // fork
void huge_unlock() noexcept;

}  // namespace strata::malloc_detail
