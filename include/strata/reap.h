/* strata/reap.h — reaps: regions you can also free single objects from.
 *
 * A reap allocates by bumping a pointer and frees everything it holds in one
 * call (strata_reap_clear / strata_reap_destroy), like a region. Unlike a
 * region it also takes back single objects (strata_reap_free): later
 * allocations from the same reap reuse that memory. Reaps nest: a child reap
 * is cleared and destroyed together with its parent.
 *
 * Threads: one reap is used by one thread at a time (the caller serialises);
 * different reaps may be used on different threads at the same time.
 *
 * Results are aligned to at least 16 bytes. Out of memory is NULL with errno
 * ENOMEM; the reap stays usable. Link with -lstrata-reap (pkg-config
 * strata-reap, CMake strata::reap), or with -lstrata-reap-emulator for the
 * same API over plain malloc/free (see docs/reaps.md).
 */
#ifndef STRATA_REAP_H
#define STRATA_REAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_reap strata_reap;

/* A new empty reap, the child of parent (NULL: a root). NULL + ENOMEM on failure. */
strata_reap *strata_reap_create(strata_reap *parent);

/* Frees every object of the reap, destroys all its descendants and the reap
 * itself. NULL is a no-op. */
void strata_reap_destroy(strata_reap *reap);

/* Frees every object of the reap and of all its descendants; the descendants
 * stay valid (and empty). NULL is a no-op. */
void strata_reap_clear(strata_reap *reap);

/* size 0 gives a unique pointer that can be freed. */
void *strata_reap_malloc(strata_reap *reap, size_t size);

/* Zeroed memory for count * size bytes; NULL + ENOMEM when that overflows. */
void *strata_reap_calloc(strata_reap *reap, size_t count, size_t size);

/* C semantics: ptr NULL acts as malloc; the contents are kept up to the smaller
 * size; on failure NULL is returned and the old object is left intact.
 * realloc(ptr, 0) returns a valid minimum-size object (never frees). */
void *strata_reap_realloc(strata_reap *reap, void *ptr, size_t size);

/* alignment must be a power of two (else NULL + EINVAL); any size is accepted. */
void *strata_reap_aligned_alloc(strata_reap *reap, size_t alignment, size_t size);

/* ptr must come from this reap (checked builds abort otherwise). NULL: no-op. */
void strata_reap_free(strata_reap *reap, void *ptr);

/* Bytes usable at ptr (>= the size requested). ptr NULL gives 0. */
size_t strata_reap_usable_size(const strata_reap *reap, const void *ptr);

/* What one reap holds (its descendants are not included). */
typedef struct strata_reap_stats {
  size_t bytes_live;   /* usable bytes of the objects currently allocated */
  size_t objects_live; /* number of objects currently allocated */
  size_t bytes_held;   /* bytes the reap holds from the system (chunks, large objects, its own header) */
  size_t chunks;       /* mappings held from the system (chunks and large objects) */
} strata_reap_stats;

/* Fills *stats for reap, in constant time (cheap enough to call after every allocation). */
void strata_reap_get_stats(const strata_reap *reap, strata_reap_stats *stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_REAP_H */
