// The allocator that comes after a shim in the symbol search order (glibc,
// jemalloc, libstrata, ...), found with dlsym(RTLD_NEXT) on first use.
//
// The bootstrap problem: dlsym itself calls calloc/malloc, which land back in
// the shim before the next allocator is known. While this thread resolves,
// next_malloc() returns nullptr and callers serve the request from a small
// static arena (never reused; free() of arena memory is ignored).
#pragma once
#include <cstddef>

namespace strata::lab {

struct NextMalloc {
  void* (*malloc)(std::size_t);
  void (*free)(void*);
  void* (*calloc)(std::size_t, std::size_t);
  void* (*realloc)(void*, std::size_t);
  int (*posix_memalign)(void**, std::size_t, std::size_t);
  void* (*aligned_alloc)(std::size_t, std::size_t);
  void* (*memalign)(std::size_t, std::size_t);
  std::size_t (*malloc_usable_size)(void*);
};

// The next allocator, or nullptr while this very thread is resolving it.
// Other threads arriving during resolution wait for it to finish.
const NextMalloc* next_malloc() noexcept;

// Zeroed memory from the static arena (nullptr when it is exhausted).
void* bootstrap_alloc(std::size_t size, std::size_t alignment) noexcept;
bool is_bootstrap(const void* p) noexcept;
// Requested size of an arena block.
std::size_t bootstrap_size(const void* p) noexcept;

}  // namespace strata::lab
