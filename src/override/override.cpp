// The one translation unit that defines the C library's allocation functions
// and every C++ operator new/delete: each forwards to libstrata's top layer
// (src/malloc/allocator.hpp). Built into libstrata.so only, with the
// definitions of the objects it goes with (src/malloc/CMakeLists.txt): malloc,
// free, operator new and delete inline the fast paths (fast_paths.hpp), so
// that the exported name is the fast path, not a jump to it.
#include <cerrno>
#include <cstddef>
#include <new>

#include "allocator.hpp"
#include "fast_paths.hpp"

namespace sm = strata::malloc_detail;

#define STRATA_EXPORT __attribute__((visibility("default")))

extern "C" {

STRATA_EXPORT void* malloc(size_t size) noexcept { return sm::allocate_inline(size); }
STRATA_EXPORT void free(void* ptr) noexcept { sm::deallocate_inline(ptr); }
STRATA_EXPORT void* calloc(size_t count, size_t size) noexcept { return sm::allocate_zeroed(count, size); }
STRATA_EXPORT void* realloc(void* ptr, size_t size) noexcept { return sm::reallocate(ptr, size); }
STRATA_EXPORT void* reallocarray(void* ptr, size_t count, size_t size) noexcept {
  return sm::reallocate_array(ptr, count, size);
}
STRATA_EXPORT void* memalign(size_t alignment, size_t size) noexcept { return sm::allocate_memalign(alignment, size); }
STRATA_EXPORT int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  return sm::posix_memalign(out, alignment, size);
}
STRATA_EXPORT void* aligned_alloc(size_t alignment, size_t size) noexcept {
  return sm::allocate_aligned(alignment, size);
}
STRATA_EXPORT void* valloc(size_t size) noexcept { return sm::allocate_page_aligned(size); }
STRATA_EXPORT void* pvalloc(size_t size) noexcept { return sm::allocate_page_multiple(size); }
STRATA_EXPORT size_t malloc_usable_size(void* ptr) noexcept { return sm::usable_size(ptr); }
// C23: the size and alignment are hints strata does not need.
STRATA_EXPORT void free_sized(void* ptr, size_t size) noexcept { sm::deallocate_sized_inline(ptr, size, 0); }
STRATA_EXPORT void free_aligned_sized(void* ptr, size_t alignment, size_t size) noexcept {
  sm::deallocate_sized_inline(ptr, size, alignment);
}

}  // extern "C"

// ---- C++ ---------------------------------------------------------------------------
// libstrata.so does not depend on the C++ runtime, so that a C program under
// LD_PRELOAD does not load libstdc++ (about a megabyte of RSS, and start-up
// time). The two runtime functions the failure path of operator new needs are
// weak references: in a C++ program they resolve to libstdc++; in a C program
// nothing calls operator new. This file is compiled without exceptions.
namespace std {
new_handler get_new_handler() noexcept __attribute__((weak));
void __throw_bad_alloc() __attribute__((weak, noreturn));  // GNU form: <array> may declare it first
}  // namespace std

// Throwing forms: the new-handler loop of [new.delete.single], then bad_alloc
// (thrown by libstdc++'s own std::__throw_bad_alloc).
namespace {

[[gnu::noinline]] void* new_failed(std::size_t size, std::size_t align) {
  for (;;) {
    std::new_handler handler = std::get_new_handler ? std::get_new_handler() : nullptr;
    if (!handler) {
      if (std::__throw_bad_alloc) std::__throw_bad_alloc();
      __builtin_trap();  // unreachable: a C++ program has libstdc++
    }
    handler();
    void* p = align ? sm::allocate_aligned(align, size) : sm::allocate(size);
    if (p) return p;
  }
}

void* new_or_throw(std::size_t size) {
  void* p = sm::allocate_inline(size);
  return __builtin_expect(p != nullptr, 1) ? p : new_failed(size, 0);
}

void* new_aligned_or_throw(std::size_t size, std::align_val_t align) {
  void* p = sm::allocate_aligned(static_cast<std::size_t>(align), size);
  return __builtin_expect(p != nullptr, 1) ? p : new_failed(size, static_cast<std::size_t>(align));
}

// Nothrow forms: the same loop, null when there is no handler. (One
// deviation: libstdc++ catches a bad_alloc thrown by the handler and returns
// null; libstrata has no exception runtime of its own, so such a throw ends in
// std::terminate.)
void* retry_or_null(std::size_t size, std::size_t align) noexcept {
  for (;;) {
    std::new_handler handler = std::get_new_handler ? std::get_new_handler() : nullptr;
    if (!handler) return nullptr;
    handler();
    void* p = align ? sm::allocate_aligned(align, size) : sm::allocate(size);
    if (p) return p;
  }
}

void* new_or_null(std::size_t size) noexcept {
  void* p = sm::allocate_inline(size);
  return __builtin_expect(p != nullptr, 1) ? p : retry_or_null(size, 0);
}

void* new_aligned_or_null(std::size_t size, std::align_val_t align) noexcept {
  void* p = sm::allocate_aligned(static_cast<std::size_t>(align), size);
  return __builtin_expect(p != nullptr, 1) ? p : retry_or_null(size, static_cast<std::size_t>(align));
}

}  // namespace

STRATA_EXPORT void* operator new(std::size_t size) { return new_or_throw(size); }
STRATA_EXPORT void* operator new[](std::size_t size) { return new_or_throw(size); }
STRATA_EXPORT void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return new_or_null(size); }
STRATA_EXPORT void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return new_or_null(size); }
STRATA_EXPORT void* operator new(std::size_t size, std::align_val_t align) { return new_aligned_or_throw(size, align); }
STRATA_EXPORT void* operator new[](std::size_t size, std::align_val_t align) { return new_aligned_or_throw(size, align); }
STRATA_EXPORT void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return new_aligned_or_null(size, align);
}
STRATA_EXPORT void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return new_aligned_or_null(size, align);
}

STRATA_EXPORT void operator delete(void* p) noexcept { sm::deallocate_inline(p); }
STRATA_EXPORT void operator delete[](void* p) noexcept { sm::deallocate_inline(p); }
STRATA_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept { sm::deallocate_inline(p); }
STRATA_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept { sm::deallocate_inline(p); }
STRATA_EXPORT void operator delete(void* p, std::size_t size) noexcept { sm::deallocate_sized_inline(p, size, 0); }
STRATA_EXPORT void operator delete[](void* p, std::size_t size) noexcept { sm::deallocate_sized_inline(p, size, 0); }
STRATA_EXPORT void operator delete(void* p, std::align_val_t) noexcept { sm::deallocate_inline(p); }
STRATA_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { sm::deallocate_inline(p); }
STRATA_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { sm::deallocate_inline(p); }
STRATA_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { sm::deallocate_inline(p); }
STRATA_EXPORT void operator delete(void* p, std::size_t size, std::align_val_t align) noexcept {
  sm::deallocate_sized_inline(p, size, static_cast<std::size_t>(align));
}
STRATA_EXPORT void operator delete[](void* p, std::size_t size, std::align_val_t align) noexcept {
  sm::deallocate_sized_inline(p, size, static_cast<std::size_t>(align));
}
