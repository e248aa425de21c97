// libstrata's top layer: what malloc, free and friends do, in C semantics.
// Both front ends call these: the strata_* API (api.cpp) and the libc/C++
// override (src/override). They never call the C library's malloc.
#pragma once
#include <cstddef>

namespace strata::malloc_detail {

void* allocate(std::size_t size) noexcept;                            // malloc
void deallocate(void* p) noexcept;                                    // free
void* allocate_zeroed(std::size_t count, std::size_t size) noexcept;  // calloc
void* reallocate(void* p, std::size_t size) noexcept;                 // realloc
void* reallocate_array(void* p, std::size_t count, std::size_t size) noexcept;
// align: a power of two (anything else gives nullptr + EINVAL).
void* allocate_aligned(std::size_t align, std::size_t size) noexcept;
void* allocate_memalign(std::size_t align, std::size_t size) noexcept;  // glibc memalign: rounds align up
int posix_memalign(void** out, std::size_t align, std::size_t size) noexcept;
void* allocate_page_aligned(std::size_t size) noexcept;       // valloc
void* allocate_page_multiple(std::size_t size) noexcept;      // pvalloc
std::size_t usable_size(const void* p) noexcept;              // 0 for nullptr
void print_stats() noexcept;                                  // to stderr
void print_stats_to(int fd) noexcept;

}  // namespace strata::malloc_detail
