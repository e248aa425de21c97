// The malloc family of a lab shim: each entry point forwards to the next
// allocator and reports the outcome to the shim's observer (observer.hpp).
//
// Calls made while a hook is already running on this thread (the next
// allocator or the observer calling malloc internally) pass straight through
// uncounted: they are the allocator's business, not the program's.
#include <errno.h>
#include <malloc.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lab_config.hpp"
#include "next_malloc.hpp"
#include "observer.hpp"

#define STRATA_LAB_EXPORT extern "C" __attribute__((visibility("default")))

namespace strata::lab {
namespace {

__attribute__((tls_model("initial-exec"))) thread_local bool t_in_hook = false;

// Marks this thread as inside a hook for the lifetime of the object.
class InHook {
 public:
  InHook() noexcept { t_in_hook = true; }
  ~InHook() { t_in_hook = false; }
  InHook(const InHook&) = delete;
  InHook& operator=(const InHook&) = delete;
};

bool multiply_overflows(std::size_t a, std::size_t b, std::size_t* product) noexcept {
  return __builtin_mul_overflow(a, b, product);
}

void* allocate_aligned(std::size_t alignment, std::size_t size, Call call) noexcept {
  const NextMalloc* next = next_malloc();
  if (next == nullptr) return bootstrap_alloc(size, alignment);
  if (t_in_hook) return next->memalign(alignment, size);
  InHook hook;
  void* p = nullptr;
  switch (call) {
    case Call::AlignedAlloc: p = next->aligned_alloc(alignment, size); break;
    default: p = next->memalign(alignment, size); break;
  }
  if (p != nullptr) observer::allocated(p, size, alignment, call);
  return p;
}

// realloc and reallocarray, after the size is known not to overflow.
void* reallocate(void* old, std::size_t size, Call call) noexcept {
  const NextMalloc* next = next_malloc();
  if (next == nullptr) {
    void* p = bootstrap_alloc(size, 16);
    if (p != nullptr && old != nullptr) {
      const std::size_t old_size = bootstrap_size(old);
      std::memcpy(p, old, old_size < size ? old_size : size);
    }
    return p;
  }
  if (old != nullptr && is_bootstrap(old)) {  // arena blocks move to the real heap
    void* p = ::malloc(size);
    if (p != nullptr) {
      const std::size_t old_size = bootstrap_size(old);
      std::memcpy(p, old, old_size < size ? old_size : size);
    }
    return p;
  }
  if (t_in_hook) return next->realloc(old, size);
  InHook hook;
  if (old == nullptr) {
    void* p = next->realloc(nullptr, size);
    if (p != nullptr) observer::allocated(p, size, 0, call);
    return p;
  }
  const Detached detached = observer::detach(old);
  void* p = next->realloc(old, size);
  if (p != nullptr)
    observer::resized(detached, p, size, call);
  else if (size == 0)
    observer::released(detached, call);  // glibc: realloc(p, 0) frees p and returns NULL
  else
    observer::reattached(detached, old);  // failed: old is untouched and still live
  return p;
}

}  // namespace
}  // namespace strata::lab

using strata::lab::Call;
using strata::lab::InHook;
using strata::lab::NextMalloc;
using strata::lab::next_malloc;
namespace observer = strata::lab::observer;

STRATA_LAB_EXPORT void* malloc(std::size_t size) {
  const NextMalloc* next = next_malloc();
  if (next == nullptr) return strata::lab::bootstrap_alloc(size, 16);
  if (strata::lab::t_in_hook) return next->malloc(size);
  InHook hook;
  void* p = next->malloc(size);
  if (p != nullptr) observer::allocated(p, size, 0, Call::Malloc);
  return p;
}

STRATA_LAB_EXPORT void free(void* p) {
  if (p == nullptr || strata::lab::is_bootstrap(p)) return;
  const NextMalloc* next = next_malloc();
  if (next == nullptr) return;  // cannot happen: only arena blocks exist before resolution
  if (strata::lab::t_in_hook) return next->free(p);
  InHook hook;
  observer::freed(p);
  next->free(p);
}

STRATA_LAB_EXPORT void* calloc(std::size_t count, std::size_t size) {
  std::size_t bytes;
  if (strata::lab::multiply_overflows(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  const NextMalloc* next = next_malloc();
  if (next == nullptr) return strata::lab::bootstrap_alloc(bytes, 16);
  if (strata::lab::t_in_hook) return next->calloc(count, size);
  InHook hook;
  void* p = next->calloc(count, size);
  if (p != nullptr) observer::allocated(p, bytes, 0, Call::Calloc);
  return p;
}

STRATA_LAB_EXPORT void* realloc(void* old, std::size_t size) {
  return strata::lab::reallocate(old, size, Call::Realloc);
}

STRATA_LAB_EXPORT void* reallocarray(void* old, std::size_t count, std::size_t size) {
  std::size_t bytes;
  if (strata::lab::multiply_overflows(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return strata::lab::reallocate(old, bytes, Call::ReallocArray);
}

STRATA_LAB_EXPORT int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  const NextMalloc* next = next_malloc();
  if (next == nullptr) {
    void* p = strata::lab::bootstrap_alloc(size, alignment);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
  }
  if (strata::lab::t_in_hook) return next->posix_memalign(out, alignment, size);
  InHook hook;
  const int rc = next->posix_memalign(out, alignment, size);
  if (rc == 0 && *out != nullptr) observer::allocated(*out, size, alignment, Call::PosixMemalign);
  return rc;
}

STRATA_LAB_EXPORT void* aligned_alloc(std::size_t alignment, std::size_t size) {
  return strata::lab::allocate_aligned(alignment, size, Call::AlignedAlloc);
}

STRATA_LAB_EXPORT void* memalign(std::size_t alignment, std::size_t size) {
  return strata::lab::allocate_aligned(alignment, size, Call::Memalign);
}

STRATA_LAB_EXPORT void* valloc(std::size_t size) {
  return strata::lab::allocate_aligned(strata::lab::config::kPageBytes, size, Call::Valloc);
}

STRATA_LAB_EXPORT void* pvalloc(std::size_t size) {
  constexpr std::size_t page = strata::lab::config::kPageBytes;
  std::size_t rounded = (size + page - 1) & ~(page - 1);
  if (rounded < size) {
    errno = ENOMEM;
    return nullptr;
  }
  if (rounded == 0) rounded = page;
  return strata::lab::allocate_aligned(page, rounded, Call::Pvalloc);
}

STRATA_LAB_EXPORT std::size_t malloc_usable_size(void* p) {
  if (p == nullptr) return 0;
  if (strata::lab::is_bootstrap(p)) return strata::lab::bootstrap_size(p);
  const NextMalloc* next = next_malloc();
  return (next != nullptr && next->malloc_usable_size != nullptr) ? next->malloc_usable_size(p) : 0;
}
