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
 * Results are aligned to at least 16 bytes (strata_reap_malloc_sized's: 8,
 * see sized reaps below). Out of memory is NULL with errno
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
#define STRATA_REAP_HEAD_VERSION 3

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
/* The sized reap's contract (strata_reap_create_sized, below):
 *   SIZED_GRANULE   slots are multiples of it; sized results are aligned to it
 *   SIZED_MAX_SLOT  the largest object a sized reap's stream holds (and the
 *                   inline path serves); larger ones have a mapping of their
 *                   own, which strata_reap_free_sized tells by the size */
#define STRATA_REAP_SIZED_GRANULE 8
#define STRATA_REAP_SIZED_MAX_SLOT 65536

/* The sized reap's inline window, in the head after the tagged one (version
 * 3 added it; the fields before it are version 2's). Same rules: whenever
 * flags != 0 the library keeps limit == bump. A tagged reap keeps it closed
 * for good, and a sized reap keeps the tagged window (bump, limit) closed
 * for good (STRATA_REAP_SLOW_SIZED), so each inline path of the wrong kind
 * of reap simply calls the library. */
typedef struct strata_reap_sized_cursor {
  uintptr_t bump;
  uintptr_t limit;
  uint32_t flags;
  uint32_t reserved;
} strata_reap_sized_cursor;

typedef struct strata_reap_head {
  uintptr_t bump;
  uintptr_t limit;
  uint32_t flags;
  uint32_t version; /* STRATA_REAP_HEAD_VERSION */
  strata_reap_sized_cursor sized;
} strata_reap_head;

#define STRATA_REAP_SLOW_CHECKED 1u  /* checked mode, ASan or Valgrind: every call is recorded */
#define STRATA_REAP_SLOW_FREED 2u    /* 8 KiB of freed objects wait for reuse: they come first */
#define STRATA_REAP_SLOW_EMULATOR 4u /* the region emulator: there is no inline path */
#define STRATA_REAP_SLOW_SIZED 16u   /* a sized reap: no tags, so no tagged inline path */

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

/* Not API (undefined after the two inline paths): what the inline paths of
 * both kinds of reap share, as macros so that each path compiles exactly as
 * if written out (a shared function changed gcc's register choices in some
 * callers).
 *   STRATA_REAP_FITS_    a slot of 1..max_slot bytes (an absurd size wraps
 *                        slot - 1 to huge) that the cursor's window holds
 *   STRATA_REAP_OPEN_    an open window is never at address 0: callers need
 *                        no null test
 *   STRATA_REAP_AHEAD_   the stream is filled in address order: fetch the
 *                        line ahead now, so that the caller's stores (and the
 *                        tags) find their lines in L1 instead of waiting for
 *                        one at every cache line of objects (docs/reaps.md).
 *                        A prefetch never faults: past the run it is dropped. */
#define STRATA_REAP_FITS_(cursor, object, slot, max_slot) \
  ((slot) - 1 < (max_slot) && (slot) - 1 < (size_t)((cursor)->limit - (object)))
#if defined(__GNUC__)
#define STRATA_REAP_OPEN_(object)               \
  do {                                          \
    if ((object) == 0) __builtin_unreachable(); \
  } while (0)
#define STRATA_REAP_AHEAD_(object) __builtin_prefetch((const void*)((object) + STRATA_REAP_PREFETCH_AHEAD), 1, 3)
#else
#define STRATA_REAP_OPEN_(object) ((void)0)
#define STRATA_REAP_AHEAD_(object) ((void)0)
#endif

/* size 0 gives a unique pointer that can be freed. Inline: bump within the
 * head's window and write the object's boundary tag; anything else (window
 * empty, checked mode, freed objects waiting, larger sizes) is one call away.
 * The inline path also prefetches the stream STRATA_REAP_PREFETCH_AHEAD
 * bytes ahead. */
static inline void *strata_reap_malloc(strata_reap *reap, size_t size) {
  strata_reap_head *head = (strata_reap_head *)(void *)reap;
  const uintptr_t object = head->bump;
  /* The object and the next one's tag. Absurd sizes wrap it to 0 or leave it huge. */
  const size_t slot = (size + STRATA_REAP_GRANULE) & ~(size_t)(STRATA_REAP_GRANULE - 1);
  if (STRATA_REAP_FITS_(head, object, slot, STRATA_REAP_MAX_TAGGED_SLOT)) {
    STRATA_REAP_OPEN_(object);
    head->bump = object + slot;
    *(unsigned char*)(object - 1) = (unsigned char)(slot / STRATA_REAP_GRANULE);
    STRATA_REAP_AHEAD_(object);
    return (void *)object;
  }
  return strata_reap_malloc_slow(reap, size);
}

/* ---- sized reaps ----------------------------------------------------------
 * A sized reap is freed with the size: strata_reap_free_sized(reap, p, size),
 * as C23 free_sized, C++ sized delete, std::pmr and Rust's Allocator do. So
 * it needs no boundary tag: objects are bare STRATA_REAP_SIZED_GRANULE
 * multiples, side by side, like a hand-written bump region, and the inline
 * path is the bump alone. Freed objects are reused (size-class lists),
 * clear/destroy/nesting are a tagged reap's, and the two kinds nest in one
 * tree. What a sized reap cannot do, having no tags: strata_reap_free,
 * strata_reap_realloc and strata_reap_usable_size (they abort with a
 * message: use the _sized calls), and count its objects (objects_live is
 * STRATA_REAP_UNCOUNTED). strata_reap_malloc, calloc and aligned_alloc work
 * on it (16-byte alignment for the first two); free those with the size too. */

/* A new empty sized reap, the child of parent (NULL: a root; either kind). */
strata_reap* strata_reap_create_sized(strata_reap* parent);

/* The out-of-line part of strata_reap_malloc_sized. */
void* strata_reap_malloc_sized_slow(strata_reap* reap, size_t size);

/* size bytes aligned to STRATA_REAP_SIZED_GRANULE; free with
 * strata_reap_free_sized(reap, p, size). size 0 gives a unique pointer. On a
 * tagged reap this is strata_reap_malloc. Inline: the bump alone. */
static inline void* strata_reap_malloc_sized(strata_reap* reap, size_t size) {
  strata_reap_sized_cursor* cursor = &((strata_reap_head*)(void*)reap)->sized;
  const uintptr_t object = cursor->bump;
  /* Size 0 and absurd sizes wrap slot - 1 to huge: the library's. */
  const size_t slot = (size + STRATA_REAP_SIZED_GRANULE - 1) & ~(size_t)(STRATA_REAP_SIZED_GRANULE - 1);
  if (STRATA_REAP_FITS_(cursor, object, slot, STRATA_REAP_SIZED_MAX_SLOT)) {
    STRATA_REAP_OPEN_(object);
    cursor->bump = object + slot;
    STRATA_REAP_AHEAD_(object);
    return (void*)object;
  }
  return strata_reap_malloc_sized_slow(reap, size);
}
#undef STRATA_REAP_FITS_
#undef STRATA_REAP_OPEN_
#undef STRATA_REAP_AHEAD_

/* Frees ptr, allocated from reap with this size (the size asked of
 * strata_reap_malloc_sized, malloc, calloc's count * size or aligned_alloc;
 * of a realloc_sized, its new size). NULL: no-op. A checked reap aborts on a
 * wrong size, a double free or a foreign pointer, naming the address. On a
 * tagged reap this is strata_reap_free. */
void strata_reap_free_sized(strata_reap* reap, void* ptr, size_t size);

/* realloc for a sized reap (old_size: the size ptr was allocated with). The
 * object the reap bumped last grows and shrinks in place, as an obstack's top
 * does; others move (contents kept up to the smaller size). ptr NULL acts as
 * malloc_sized; on failure NULL, and the old object is left intact. */
void* strata_reap_realloc_sized(strata_reap* reap, void* ptr, size_t old_size, size_t new_size);

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
#define STRATA_REAP_UNCOUNTED ((size_t) - 1) /* objects_live of a sized reap */
typedef struct strata_reap_stats {
  size_t bytes_live;   /* usable bytes of the objects currently allocated (a sized reap: their slots) */
  size_t objects_live; /* number of objects currently allocated, or STRATA_REAP_UNCOUNTED */
  size_t bytes_held;   /* bytes the reap holds from the system (chunks, large objects, its own header) */
  size_t chunks;       /* mappings held from the system (chunks and large objects) */
} strata_reap_stats;

/* Fills *stats for reap, in constant time (cheap enough to call after every allocation). */
void strata_reap_get_stats(const strata_reap *reap, strata_reap_stats *stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_REAP_H */
