// The C library's rules on top of the fast paths: calloc's overflow check
// and zeroing, realloc in place or by copy, reallocarray, aligned_alloc,
// memalign, posix_memalign, valloc, pvalloc, malloc_usable_size; errno as
// glibc sets it.
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "allocator.hpp"
#include "fast_paths.hpp"
#include "strata/platform/pages.hpp"

namespace strata::malloc_detail {

namespace {
// After the checks of every build: p is a live object (or, in a block of
// aligned objects, points into one).
// The common case first, as free tests it (fast_paths.hpp, free_remote): a
// slot start not tagged freed is the object itself. (The hardened build
// checks every pointer in full: slots bumping never reached too.)
std::size_t small_usable_size(SmallSegment* seg, const void* p, Use use) noexcept {
  Page* page = seg->page_of(p);
  auto* object = static_cast<char*>(const_cast<void*>(p));
  if constexpr (cfg::kHardened) {
    object = static_cast<char*>(hardened_live_object(page, object, seg->header.owner == tl_heap, use));
  } else if (STRATA_UNLIKELY(!passes_free_checks(page, p))) {
    object = static_cast<char*>(small_live_object(page, object, seg->header.owner == tl_heap, use));
  }
  if constexpr (cfg::kCanaryBytes > 0) return hardened_usable_size(object, page, p);  // the recorded request
  return static_cast<std::size_t>(object + page->block_size - cfg::kCanaryBytes - static_cast<const char*>(p));
}

// Will allocate_inline(size) bump into memory no object ever used? It bumps
// only when the block's free list is empty. A block's fresh memory is zero
// past the OS pages its earlier lives reached (touched_pages: 0 for memory
// fresh from the OS or discarded). False for the empty page (checked mode, no
// heap yet, a class without a block).
bool next_small_is_zero(std::size_t size) noexcept {
  const Page* page = tl_heap->by_size[(size + cfg::kMinAlign - 1) / cfg::kMinAlign];  // as allocate_inline
  char* next = page->bump;
  auto offset = reinterpret_cast<std::uintptr_t>(next) & (cfg::kPageSize - 1);
  return page->free == nullptr && next != page->bump_end &&
         offset >= std::size_t{page->touched_pages} * cfg::kOsPageSize;
}

// A fresh object's first OS page is written already (allocate_inline stores
// the tag there); its further pages are not resident yet. calloc's callers
// often read before they write (check, accumulate): that read maps the
// shared zero page and the first store takes a second fault, a copy on write
// with a TLB shootdown on every CPU the process runs on (bench/malloc's
// stress2, issue 20; docs/benchmarks-choices.md, "calloc's pages"). A zero stored at the start of
// each further page makes one write fault of each.
void fault_in_written(char* object, std::size_t size) noexcept {
  std::uintptr_t end = reinterpret_cast<std::uintptr_t>(object) + size;
  for (std::uintptr_t at = (reinterpret_cast<std::uintptr_t>(object) | (cfg::kOsPageSize - 1)) + 1; at < end;
       at += cfg::kOsPageSize)
    *reinterpret_cast<volatile char*>(at) = 0;
}
}  // namespace

void* allocate_zeroed(std::size_t count, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (total <= cfg::kSmallMax) {
    bool zero = !cfg::kHardened && next_small_is_zero(total);
    void* p = allocate_inline(total);
    if (p && !zero) std::memset(p, 0, total);
    if (p && zero) fault_in_written(static_cast<char*>(p), total);
    return p;
  }
  if (fits_large(total, cfg::kMinAlign)) {  // clears only what is not zero already
    void* p = large_calloc(large_arena(tl_heap->number), total);
    if (!p) errno = ENOMEM;
    return p;
  }
  bool zeroed = false;
  void* p = allocate_big(total, cfg::kMinAlign, &zeroed);
  if (p && !zeroed) std::memset(p, 0, total);
  return p;
}

std::size_t usable_size(const void* p) noexcept { return checked_usable_size(p, Use::kUsableSize); }

std::size_t checked_usable_size(const void* p, Use use) noexcept {
  if (!p) return 0;
  if (cfg::kNoAccessZero && in_zero_area(p)) {
    zero_area_free(const_cast<void*>(p), use == Use::kFree ? Use::kUsableSize : use);  // checks it
    return 0;
  }
  check_gate(p, use);
  SegmentHeader* seg = segment_of(p);
  switch (seg->kind) {
    case SegmentKind::kSmall:
      return small_usable_size(reinterpret_cast<SmallSegment*>(seg), p, use);
    case SegmentKind::kLarge:
      return large_checked_usable_size(p, use);
    case SegmentKind::kHuge:
      break;
  }
  huge_check_live(p, use);
  return huge_usable_size(p);
}

void* reallocate(void* p, std::size_t size) noexcept {
  if (!p) return allocate_inline(size);
  if (cfg::kNoAccessZero && in_zero_area(p)) {  // malloc(0)'s: nothing to copy
    zero_area_free(p, Use::kRealloc);           // checks it is live
    void* q = allocate_inline(size);
    if (q) zero_area_free(p, Use::kFree);
    return q;
  }
  if (size > kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  check_gate(p, Use::kRealloc);
  SegmentHeader* seg = segment_of(p);
  if (STRATA_UNLIKELY(checked_mode())) check_pointer(p);  // realloc of a freed or foreign pointer
  std::size_t have;
  switch (seg->kind) {
    case SegmentKind::kSmall:
      have = small_usable_size(reinterpret_cast<SmallSegment*>(seg), p, Use::kRealloc);
      if constexpr (cfg::kHardened) {
        if (hardened_resize(p, have, size)) return p;
      } else if (size <= have && size >= have / 2) {
        return p;  // same class or close enough
      }
      break;
    case SegmentKind::kLarge:
      have = large_checked_usable_size(p, Use::kRealloc);
      if (size > cfg::kSmallMax && size <= cfg::kLargeMax && large_resize(p, size)) return p;
      break;
    case SegmentKind::kHuge:
    default:
      huge_check_live(p, Use::kRealloc);
      if (size > cfg::kLargeMax) {
        if (huge_resize(p, size)) return p;
        if (void* q = huge_move(p, size)) return q;
      }
      have = huge_usable_size(p);
      break;
  }
  void* q = allocate_inline(size);
  if (!q) return nullptr;  // errno ENOMEM; p is untouched
  std::memcpy(q, p, size < have ? size : have);
  deallocate_inline(p);
  return q;
}

void* reallocate_array(void* p, std::size_t count, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return reallocate(p, total);
}

void* allocate_aligned(std::size_t align, std::size_t size) noexcept {
  if (align == 0 || (align & (align - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  if (align <= cfg::kMinAlign) return allocate_inline(size);
  // A zero-byte object still needs a byte of its own: carved from a padded
  // block, its aligned pointer could otherwise be that block's end, which is
  // the next object's start (and freeing it would free the neighbour).
  if (size == 0) size = 1;
  if (size > kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  if (size <= cfg::kSmallMax && align < cfg::kPageSize) {
    // Page blocks start kPageSize-aligned, so a class that is a multiple of the
    // alignment gives aligned objects as they are.
    if (size + cfg::kCanaryBytes <= cfg::kSmallMax && kClassSize[class_of(size + cfg::kCanaryBytes)] % align == 0)
      return allocate_inline(size);
    std::size_t padded = size + align - cfg::kMinAlign;
    if (padded + cfg::kCanaryBytes <= cfg::kSmallMax) {
      void* p = allocate_inline(padded);
      if (!p) return nullptr;
      auto addr = reinterpret_cast<std::uintptr_t>(p);
      auto aligned = (addr + align - 1) & ~(align - 1);
      if (aligned != addr) {
        auto* seg = reinterpret_cast<SmallSegment*>(segment_of(p));
        // Our own block (the allocation came from this thread's heap), so we are
        // the only writer; atomic because freeing threads read it (free_remote).
        Page* page = seg->page_of(p);
        __atomic_store_n(&page->flags, static_cast<std::uint8_t>(page->flags | kPageInterior), __ATOMIC_RELAXED);
        // Every free of this block now takes the slow path, which finds the
        // object start (atomic: freeing threads read it, free_remote).
        page->set_slot_magic(0);
      }
      return reinterpret_cast<void*>(aligned);
    }
  }
  bool zeroed;
  return allocate_big(size, align, &zeroed);
}

void* allocate_memalign(std::size_t align, std::size_t size) noexcept {
  if (align > (std::size_t{1} << 62)) {
    errno = EINVAL;
    return nullptr;
  }
  std::size_t a = cfg::kMinAlign;  // glibc: any alignment, rounded up to a power of two
  while (a < align) a <<= 1;
  return allocate_aligned(a, size);
}

int posix_memalign(void** out, std::size_t align, std::size_t size) noexcept {
  if (align < sizeof(void*) || (align & (align - 1)) != 0) return EINVAL;
  int saved = errno;
  void* p = allocate_aligned(align, size);
  if (!p) {
    int error = errno;
    errno = saved;
    return error == EINVAL ? EINVAL : ENOMEM;
  }
  *out = p;
  return 0;
}

void* allocate_page_aligned(std::size_t size) noexcept { return allocate_aligned(platform::page_size(), size); }

void* allocate_page_multiple(std::size_t size) noexcept {
  std::size_t page = platform::page_size();
  if (size > kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  std::size_t rounded = size == 0 ? page : (size + page - 1) & ~(page - 1);
  return allocate_aligned(page, rounded);
}

}  // namespace strata::malloc_detail
