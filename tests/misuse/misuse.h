/* What every program of the misuse suite shares (lab/strata_lab/hardening.py runs them).

   The protocol: a misuse program does one misuse of the heap API and then
   exits 0 ("unnoticed"); the allocator catches it by stopping the process
   with a signal (SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP). A program whose
   API is absent under this allocator exits MISUSE_NOT_APPLICABLE. A correct
   program uses the same APIs legally and exits 0; it checks its own results
   and exits 1 when one is wrong.

   The compiler must not see through the misuse: every pointer passes through
   hide() (an empty asm the optimiser cannot look into), so neither GCC's
   warnings nor its dead-store and malloc/free elision remove what we do. */
#ifndef STRATA_TESTS_MISUSE_H
#define STRATA_TESTS_MISUSE_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MISUSE_NOT_APPLICABLE 77
#define MISUSE_SMALL 32u             /* a size class boundary in every allocator compared */
#define MISUSE_LARGE (256u * 1024u)  /* page multiple, above glibc's mmap threshold */

/* No core files: a caught misuse is the normal outcome here. */
__attribute__((constructor)) static inline void misuse_no_core(void) {
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
}

static inline void *hide(void *p) {
  __asm__ volatile("" : "+r"(p) : : "memory");
  return p;
}

static inline char *hidden_malloc(size_t size) {
  char *p = (char *)hide(malloc(size));
  if (p == NULL && size != 0) {
    fprintf(stderr, "malloc(%zu) failed\n", size);
    exit(1);
  }
  return p;
}

static inline void hidden_free(void *p) { free(hide(p)); }

static inline void fill(char *p, size_t size, int byte) {
  volatile char *v = (volatile char *)hide(p);
  for (size_t i = 0; i < size; i++) v[i] = (char)byte;
}

static inline void poke(char *p, size_t offset, size_t bytes) {
  volatile char *v = (volatile char *)hide(p);
  for (size_t i = 0; i < bytes; i++) v[offset + i] = 0x41;
}

/* More allocations of that size after the misuse, each written and freed:
   where an allocator checks at reuse (canaries, filled freed memory, free
   lists it can tell were forged), this is where it looks. */
static inline void churn(size_t size, int rounds) {
  enum { OBJECTS = 32 };
  for (int r = 0; r < rounds; r++) {
    char *objects[OBJECTS];
    for (int i = 0; i < OBJECTS; i++) {
      objects[i] = hidden_malloc(size);
      fill(objects[i], size, 0x33);
    }
    for (int i = 0; i < OBJECTS; i++) hidden_free(objects[i]);
  }
}

/* For the correct programs: a result that is wrong is a failure (exit 1), never a signal. */
static inline void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "correct program: %s\n", what);
    exit(1);
  }
}

static inline int holds(const char *p, size_t size, int byte) {
  const volatile char *v = (const volatile char *)hide((void *)p);
  for (size_t i = 0; i < size; i++)
    if (v[i] != (char)byte) return 0;
  return 1;
}

static inline int unnoticed(const char *what) {
  fprintf(stderr, "misuse unnoticed: %s\n", what);
  return 0;
}

/* A double free of a `size`-byte object, with `others` frees of its size
   between the two (a delayed double free), then the size reused. */
static inline int double_free(size_t size, int others, const char *what) {
  enum { MOST = 16 };
  char *p = hidden_malloc(size);
  char *between[MOST];
  fill(p, size, 0);
  for (int i = 0; i < others && i < MOST; i++) between[i] = hidden_malloc(size);
  hidden_free(p);
  for (int i = 0; i < others && i < MOST; i++) hidden_free(between[i]);
  hidden_free(p);
  churn(size, size < 4096 ? 2 : 1);
  return unnoticed(what);
}

/* A free of a pointer `offset` bytes into a `size`-byte object (into the
   middle, or just off its start: unaligned), then the size reused. */
static inline int free_inside(size_t size, size_t offset, const char *what) {
  char *p = hidden_malloc(size);
  fill(p, size, 0);
  hidden_free(p + offset);
  churn(size, size < 4096 ? 2 : 1);
  return unnoticed(what);
}

/* A heap overflow: `bytes` bytes written just past a `size`-byte object,
   which has a neighbour of its size; then both freed and the size reused. */
static inline int overflow(size_t size, size_t bytes, const char *what) {
  char *object = hidden_malloc(size);
  char *neighbour = hidden_malloc(size);
  fill(object, size, 0);
  fill(neighbour, size, 0);
  poke(object, size, bytes);
  hidden_free(object);
  hidden_free(neighbour);
  churn(size, size < 4096 ? 4 : 1);
  return unnoticed(what);
}

/* A write after free: the whole freed object overwritten (as a program that
   still updates a struct it freed would), then its size reused. */
static inline int write_after_free(size_t size, const char *what) {
  char *p = hidden_malloc(size);
  fill(p, size, 0);
  hidden_free(p);
  poke(p, 0, size);
  churn(size, size < 4096 ? 4 : 1);
  return unnoticed(what);
}

/* A read after free. Reading does not corrupt the heap, so no allocator can
   stop it at the read: it is caught when the secret no longer leaks, that
   is, when the allocator zeroed or filled the freed object (the program then
   stops itself with SIGABRT) or unmapped it (the read takes a SIGSEGV). The
   secret leaks when at least half of its bytes are still there (a free list
   may reuse the first words of a free object without erasing it). */
static inline int read_after_free(size_t size, const char *what) {
  char *p = hidden_malloc(size);
  fill(p, size, 0x5a);
  hidden_free(p);
  const volatile char *v = (const volatile char *)hide(p);
  size_t still_there = 0;
  for (size_t i = 0; i < size; i++) still_there += v[i] == 0x5a;
  if (still_there * 2 < size) {
    fprintf(stderr, "read after free: the freed object no longer holds the secret (%zu of %zu bytes)\n",
            still_there, size);
    abort();
  }
  return unnoticed(what);
}

#endif
