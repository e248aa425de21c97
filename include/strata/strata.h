/* libstrata — a drop-in, thread-safe malloc on the Vam design.
 *
 * Linking with -lstrata (or LD_PRELOAD=libstrata.so) replaces malloc, free and
 * every C++ operator new/delete. The strata_* functions below are the same
 * allocator under its own names; the library strata_core provides only these,
 * so they can be used beside the system malloc.
 *
 * Environment (read at start-up): STRATA_SHOW_STATS=1 prints statistics at
 * exit, STRATA_VERBOSE=1 prints the configuration, STRATA_CHECK=1 reports
 * double frees and foreign pointers (with the address) and aborts. Unknown
 * STRATA_* variables are reported on stderr. See docs/libstrata.md. */
#ifndef STRATA_STRATA_H
#define STRATA_STRATA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_API __attribute__((visibility("default")))

/* malloc semantics: NULL with errno ENOMEM when out of memory. */
STRATA_API void* strata_malloc(size_t size);
STRATA_API void strata_free(void* ptr);
/* NULL + ENOMEM when count * size overflows. */
STRATA_API void* strata_calloc(size_t count, size_t size);
/* On failure returns NULL and leaves ptr intact. strata_realloc(p, 0) returns
 * a minimal object (like jemalloc and mimalloc), never NULL on success. */
STRATA_API void* strata_realloc(void* ptr, size_t size);
STRATA_API void* strata_reallocarray(void* ptr, size_t count, size_t size);
/* alignment: a power of two, else NULL + EINVAL. Any size. */
STRATA_API void* strata_aligned_alloc(size_t alignment, size_t size);
/* 0, EINVAL (alignment not a power of two multiple of sizeof(void*)) or ENOMEM. */
STRATA_API int strata_posix_memalign(void** out, size_t alignment, size_t size);
/* Bytes usable at ptr (>= the request); 0 for NULL. */
STRATA_API size_t strata_usable_size(const void* ptr);
/* Statistics on stderr: per size class blocks, OS pages and live bytes; large
 * and huge objects; mapped bytes, peak RSS, pages discarded. */
STRATA_API void strata_stats_print(void);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_STRATA_H */
