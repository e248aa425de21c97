// Telling AddressSanitizer and Valgrind which region memory a program may touch
// (used by the region layers and by strata reaps).
//
// Under ASan (compile time) freed and cleared memory is poisoned; under
// Valgrind (detected at run time) every object is announced to memcheck with
// the mempool client requests, one pool per heap. Both turn a user's
// use-after-free or use-after-clear into the report they already know.
// Outside both, every function here compiles to nothing or a few no-op
// instructions, and none of them is on the allocation fast path: a heap that
// needs them takes its instrumented (slow) path.
#pragma once
#include <cstddef>

// GCC defines __SANITIZE_ADDRESS__; clang (before 17) only answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define STRATA_REGION_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_REGION_ASAN 1
#endif
#endif
#ifndef STRATA_REGION_ASAN
#define STRATA_REGION_ASAN 0
#endif
#if STRATA_REGION_ASAN
#include <sanitizer/asan_interface.h>
#endif

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#define STRATA_REGION_VALGRIND 1
#endif
#endif
#ifndef STRATA_REGION_VALGRIND
#define STRATA_REGION_VALGRIND 0
#endif

namespace strata::layers::instrument {

inline constexpr bool kAsan = STRATA_REGION_ASAN != 0;

// Whether the layers may talk to Valgrind when the program runs under it.
// The layers read no environment: a product that gives its users a switch
// installs a function here before main (the reap library does, for its
// STRATA_REAP_CHECK=0, which asks for plain mmaps to count the fast path with
// callgrind). It is called once, the first time a layer asks, so it may read
// settings the program makes early in main. Without one the hooks are on.
using HooksAllowed = bool (*)() noexcept;
inline HooksAllowed valgrind_hooks_allowed = nullptr;

inline void set_valgrind_hooks_allowed(HooksAllowed allowed) noexcept { valgrind_hooks_allowed = allowed; }

// Under Valgrind every region heap announces its objects, unless the product
// said no (then Valgrind sees plain mmaps).
inline bool valgrind_hooks_on() noexcept {
#if STRATA_REGION_VALGRIND
  static const bool on = RUNNING_ON_VALGRIND != 0 && (valgrind_hooks_allowed == nullptr || valgrind_hooks_allowed());
  return on;
#else
  return false;
#endif
}

// Memory nobody may touch: fresh chunks, freed objects, cleared chunks.
inline void hide(const void* p, std::size_t n) noexcept {
#if STRATA_REGION_ASAN
  __asan_poison_memory_region(p, n);
#endif
#if STRATA_REGION_VALGRIND
  if (valgrind_hooks_on()) (void)VALGRIND_MAKE_MEM_NOACCESS(p, n);
#endif
  (void)p;
  (void)n;
}

// Memory the heap itself reads and writes (slab headers, free-list links).
inline void expose(const void* p, std::size_t n) noexcept {
#if STRATA_REGION_ASAN
  __asan_unpoison_memory_region(p, n);
#endif
#if STRATA_REGION_VALGRIND
  if (valgrind_hooks_on()) (void)VALGRIND_MAKE_MEM_DEFINED(p, n);
#endif
  (void)p;
  (void)n;
}

// Before memory goes back to the kernel: forget any poisoning, so whoever maps
// the addresses next starts clean.
inline void forget(const void* p, std::size_t n) noexcept {
#if STRATA_REGION_ASAN
  __asan_unpoison_memory_region(p, n);
#endif
  (void)p;
  (void)n;
}

// One Valgrind mempool per heap, keyed by its address.
inline void pool_create(const void* pool) noexcept {
#if STRATA_REGION_VALGRIND
  if (valgrind_hooks_on()) VALGRIND_CREATE_MEMPOOL(pool, 0, 0);
#endif
  (void)pool;
}
inline void pool_destroy(const void* pool) noexcept {
#if STRATA_REGION_VALGRIND
  if (valgrind_hooks_on()) VALGRIND_DESTROY_MEMPOOL(pool);
#endif
  (void)pool;
}

// An object handed to the user: addressable, contents undefined.
inline void object_alloc(const void* pool, const void* p, std::size_t n) noexcept {
#if STRATA_REGION_ASAN
  __asan_unpoison_memory_region(p, n);
#endif
#if STRATA_REGION_VALGRIND
  if (valgrind_hooks_on()) VALGRIND_MEMPOOL_ALLOC(pool, p, n);
#endif
  (void)pool;
  (void)p;
  (void)n;
}

// An object given back by the user: nobody may touch it any more.
inline void object_free(const void* pool, const void* p, std::size_t n) noexcept {
#if STRATA_REGION_ASAN
  __asan_poison_memory_region(p, n);
#endif
#if STRATA_REGION_VALGRIND
  if (valgrind_hooks_on()) VALGRIND_MEMPOOL_FREE(pool, p);
#endif
  (void)pool;
  (void)p;
  (void)n;
}

// Reading and writing a byte the user must not touch (a boundary tag between
// two objects): hidden from ASan and Valgrind, so the heap's own access must
// not be reported. The tag stays hidden afterwards.
#if STRATA_REGION_ASAN
__attribute__((no_sanitize("address")))
#endif
inline unsigned char read_hidden_byte(const void* p) noexcept {
#if STRATA_REGION_VALGRIND
  if (valgrind_hooks_on()) {
    (void)VALGRIND_MAKE_MEM_DEFINED(p, 1);
    const unsigned char v = *static_cast<const volatile unsigned char*>(p);
    (void)VALGRIND_MAKE_MEM_NOACCESS(p, 1);
    return v;
  }
#endif
  return *static_cast<const unsigned char*>(p);
}

#if STRATA_REGION_ASAN
__attribute__((no_sanitize("address")))
#endif
inline void write_hidden_byte(void* p, unsigned char v) noexcept {
#if STRATA_REGION_VALGRIND
  if (valgrind_hooks_on()) {
    (void)VALGRIND_MAKE_MEM_UNDEFINED(p, 1);
    *static_cast<volatile unsigned char*>(p) = v;
    (void)VALGRIND_MAKE_MEM_NOACCESS(p, 1);
    return;
  }
#endif
  *static_cast<unsigned char*>(p) = v;
}

}  // namespace strata::layers::instrument
