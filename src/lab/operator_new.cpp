// C++ allocation in a lab shim. glibc's C++ runtime implements operator
// new/delete with malloc/free, but jemalloc, tcmalloc and mimalloc define their
// own operators, which would bypass the shim's malloc family. So the shim
// defines them too, on top of its own (observed) malloc family:
//   new -> malloc / memalign,  delete (every form) -> free.
// Only when that fails does new defer to the next definition (the C++ runtime
// or the allocator's), which runs the new-handler and throws std::bad_alloc;
// this file needs no C++ runtime of its own and has nothing to unwind.
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>

#include <atomic>
#include <cstddef>
#include <new>

#define STRATA_LAB_EXPORT __attribute__((visibility("default")))

namespace strata::lab {
namespace {

using PlainNew = void* (*)(std::size_t);
using AlignedNew = void* (*)(std::size_t, std::align_val_t);
using NothrowNew = void* (*)(std::size_t, const std::nothrow_t&);
using AlignedNothrowNew = void* (*)(std::size_t, std::align_val_t, const std::nothrow_t&);

// The next definition of a `new`, looked up when first needed (only after an
// allocation failed, so the common path never calls dlsym).
template <class Fn>
Fn next_definition(std::atomic<Fn>& slot, const char* mangled) noexcept {
  Fn fn = slot.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, mangled));
    slot.store(fn, std::memory_order_release);
  }
  return fn;
}

std::atomic<PlainNew> g_new{nullptr}, g_new_array{nullptr};
std::atomic<AlignedNew> g_new_aligned{nullptr}, g_new_array_aligned{nullptr};
std::atomic<NothrowNew> g_new_nothrow{nullptr}, g_new_array_nothrow{nullptr};
std::atomic<AlignedNothrowNew> g_new_aligned_nothrow{nullptr}, g_new_array_aligned_nothrow{nullptr};

void* allocate(std::size_t size) noexcept { return ::malloc(size == 0 ? 1 : size); }
void* allocate(std::size_t size, std::align_val_t alignment) noexcept {
  return ::memalign(static_cast<std::size_t>(alignment), size == 0 ? 1 : size);
}

[[noreturn]] void no_next_new() noexcept { ::abort(); }  // out of memory and no C++ runtime to throw

}  // namespace
}  // namespace strata::lab

using namespace strata::lab;

STRATA_LAB_EXPORT void* operator new(std::size_t size) {
  if (void* p = allocate(size)) return p;
  if (PlainNew next = next_definition(g_new, "_Znwm")) return next(size);
  no_next_new();
}
STRATA_LAB_EXPORT void* operator new[](std::size_t size) {
  if (void* p = allocate(size)) return p;
  if (PlainNew next = next_definition(g_new_array, "_Znam")) return next(size);
  no_next_new();
}
STRATA_LAB_EXPORT void* operator new(std::size_t size, std::align_val_t alignment) {
  if (void* p = allocate(size, alignment)) return p;
  if (AlignedNew next = next_definition(g_new_aligned, "_ZnwmSt11align_val_t")) return next(size, alignment);
  no_next_new();
}
STRATA_LAB_EXPORT void* operator new[](std::size_t size, std::align_val_t alignment) {
  if (void* p = allocate(size, alignment)) return p;
  if (AlignedNew next = next_definition(g_new_array_aligned, "_ZnamSt11align_val_t")) return next(size, alignment);
  no_next_new();
}
STRATA_LAB_EXPORT void* operator new(std::size_t size, const std::nothrow_t& tag) noexcept {
  if (void* p = allocate(size)) return p;
  NothrowNew next = next_definition(g_new_nothrow, "_ZnwmRKSt9nothrow_t");
  return next ? next(size, tag) : nullptr;
}
STRATA_LAB_EXPORT void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  if (void* p = allocate(size)) return p;
  NothrowNew next = next_definition(g_new_array_nothrow, "_ZnamRKSt9nothrow_t");
  return next ? next(size, tag) : nullptr;
}
STRATA_LAB_EXPORT void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t& tag) noexcept {
  if (void* p = allocate(size, alignment)) return p;
  AlignedNothrowNew next = next_definition(g_new_aligned_nothrow, "_ZnwmSt11align_val_tRKSt9nothrow_t");
  return next ? next(size, alignment, tag) : nullptr;
}
STRATA_LAB_EXPORT void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t& tag) noexcept {
  if (void* p = allocate(size, alignment)) return p;
  AlignedNothrowNew next = next_definition(g_new_array_aligned_nothrow, "_ZnamSt11align_val_tRKSt9nothrow_t");
  return next ? next(size, alignment, tag) : nullptr;
}

// Every delete is free: all of the above is malloc-family memory.
STRATA_LAB_EXPORT void operator delete(void* p) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete[](void* p) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete(void* p, std::size_t) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete[](void* p, std::size_t) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete(void* p, std::align_val_t) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete(void* p, std::size_t, std::align_val_t) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { ::free(p); }
STRATA_LAB_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { ::free(p); }
