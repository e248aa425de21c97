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
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_reap strata_reap;

/* The public head of every reap: the first bytes of the object a
 * strata_reap * points to, and the only part of a reap that code compiled
 * against this header reads (strata_reap_malloc below bumps inline through
 * it). Layout version STRATA_REAP_HEAD_VERSION; a library with another
 * version is not link-compatible.
 *
 *   bump   next free byte of the reap's current stream (STRATA_REAP_GRANULE-aligned)
 *   limit  end of the inline window: [bump, limit) may be handed out inline
 *   flags  why the inline path is closed (STRATA_REAP_SLOW_*, or bits the
 *          library keeps to itself, e.g. while a reap is new or just
 *          cleared), 0 when open.
 *          Whenever flags != 0 the library keeps limit == bump, so the inline
 *          path fails its one comparison and calls the library: it never has
 *          to read flags itself.
 *
 * Every object is preceded by a one-byte boundary tag: the byte before it
 * holds its slot size in granules (slot = object + its tag's byte in the
 * next slot: size + 1 rounded up to STRATA_REAP_GRANULE), which is how free
 * and usable_size find its size without a header. A tag fits in a byte only
 * for slots up to STRATA_REAP_MAX_TAGGED_SLOT: the inline path tests that
 * bound itself (a constant folds it away), and the window spans the whole
 * run (version 2; version 1 bounded it to one tagged slot, and so called the
 * library that often: docs/reaps.md). */
#define STRATA_REAP_HEAD_VERSION 2

/* The reap's contract, in one place: the layers (tagged_stream_heap.hpp)
 * static_assert against these, and the Rust crate's build script reads them.
 *   GRANULE          slots are multiples of it; every result is aligned to it
 *   MAX_TAGGED_SLOT  the largest slot a one-byte tag records (255 granules),
 *                    and so the largest the inline path serves
 *   PREFETCH_AHEAD   how far ahead of the bump the inline path prefetches
 *                    (bytes; why: docs/reaps.md) */
#define STRATA_REAP_GRANULE 16
#define STRATA_REAP_MAX_TAGGED_SLOT 4080
#define STRATA_REAP_PREFETCH_AHEAD 1024
typedef struct strata_reap_head {
  uintptr_t bump;
  uintptr_t limit;
  uint32_t flags;
  uint32_t version; /* STRATA_REAP_HEAD_VERSION */
} strata_reap_head;

#define STRATA_REAP_SLOW_CHECKED 1u  /* checked mode, ASan or Valgrind: every call is recorded */
#define STRATA_REAP_SLOW_FREED 2u    /* 8 KiB of freed objects wait for reuse: they come first */
#define STRATA_REAP_SLOW_EMULATOR 4u /* the region emulator: there is no inline path */

/* A new empty reap, the child of parent (NULL: a root). NULL + ENOMEM on failure. */
strata_reap *strata_reap_create(strata_reap *parent);

/* Frees every object of the reap, destroys all its descendants and the reap
 * itself. NULL is a no-op. */
void strata_reap_destroy(strata_reap *reap);

/* Frees every object of the reap and of all its descendants; the descendants
 * stay valid (and empty). NULL is a no-op. */
void strata_reap_clear(strata_reap *reap);

/* The out-of-line part of strata_reap_malloc (same contract): everything the
 * inline window cannot serve. */
void *strata_reap_malloc_slow(strata_reap *reap, size_t size);

/* size 0 gives a unique pointer that can be freed. Inline: bump within the
 * head's window and write the object's boundary tag; anything else (window
 * empty, checked mode, freed objects waiting, larger sizes) is one call away.
 * The inline path also prefetches the stream STRATA_REAP_PREFETCH_AHEAD
 * bytes ahead (below). */
static inline void *strata_reap_malloc(strata_reap *reap, size_t size) {
  strata_reap_head *head = (strata_reap_head *)(void *)reap;
  const uintptr_t object = head->bump;
  /* Absurd sizes wrap slot to 0 or leave it huge: either way a test fails. */
  const size_t slot = (size + STRATA_REAP_GRANULE) & ~(size_t)(STRATA_REAP_GRANULE - 1);
  /* the tag fits; the window holds it */
  if (slot - 1 < STRATA_REAP_MAX_TAGGED_SLOT && slot - 1 < (size_t)(head->limit - object)) {
#if defined(__GNUC__)
    if (object == 0) __builtin_unreachable(); /* an open window is never at address 0: callers need no null test */
#endif
    head->bump = object + slot;
    *(unsigned char*)(object - 1) = (unsigned char)(slot / STRATA_REAP_GRANULE);
#if defined(__GNUC__)
    /* The stream is filled in address order: fetch the line ahead now, so
     * that the caller's stores and the tags find their lines in L1 instead of
     * waiting for one at every cache line of objects (docs/reaps.md). A
     * prefetch never faults: past the run it is dropped or wasted. */
    __builtin_prefetch((const void *)(object + STRATA_REAP_PREFETCH_AHEAD), 1, 3);
#endif
    return (void *)object;
  }
  return strata_reap_malloc_slow(reap, size);
}

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
