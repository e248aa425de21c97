// libstrata's top layer: what malloc, free and friends do, in C semantics.
// Both front ends call these: the strata_* API (api.cpp) and the libc/C++
// override (src/override). They never call the C library's malloc.
//
// libstrata is a drop-in malloc on the Vam design (Feng & Berger 2005), with
// per-thread heaps. The allocator as a chain of layers, from the OS up:
//
//   OS layer (os.hpp)            segments: 4 MiB areas aligned to 4 MiB, page
//                                discarding, the area map; on strata::platform
//   ├─ SmallSegment              page blocks of 64 KiB, descriptors in page 0
//   │  (segment.hpp)             BIBOP: no object headers, size from the descriptor
//   │  └─ PerThreadHeap          one per thread, no lock: per class an available
//   │     (per_thread_heap)      and a full list (ordered per-size allocation), reap
//   │                            allocation inside a block, empty-block LRU, remote
//   │                            frees through an atomic list per block
//   ├─ LargeArena (large_heap)   shared regions, boundary tags, segregated good fit,
//   │                            splitting, immediate coalescing; locked
//   └─ huge (huge_heap)          runs of segments in reserved regions, a cache of resident pages
//
// and the functions below, by concern:
//   fast_paths.hpp/.cpp  malloc and free: size dispatch on malloc, segment kind on free
//   c_semantics.cpp      calloc, realloc, aligned allocation, usable size: the C rules
//   stats.cpp            print_stats
//   startup.cpp          start-up, thread exit, fork; options.cpp reads the environment
//   checked.cpp          checked mode's pointer check
//
// The layers are concrete classes, not a template mixin chain: the fast paths
// reach into PerThreadHeap and Page directly (a thread-local load, a table
// lookup, a pointer bump) and a mixin chain would hide exactly the data layout
// that makes them fast. Each layer still has one job and its own file.
#pragma once
#include <cstddef>

namespace strata::malloc_detail {

void* allocate(std::size_t size) noexcept;                            // malloc (fast_paths.cpp)
void deallocate(void* p) noexcept;                                    // free (fast_paths.cpp)
// free_sized, free_aligned_sized, sized operator delete (align 0: unaligned
// forms); the hardened build checks the size against the object.
void deallocate_sized(void* p, std::size_t size, std::size_t align) noexcept;
// c_semantics.cpp:
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
void print_stats() noexcept;                                  // to stderr (stats.cpp)
void print_stats_to(int fd) noexcept;

}  // namespace strata::malloc_detail
