/* A program with known page references, measured by lab/tests/test_pages.py
   under strata-pages:

     pages_cases N PASSES STEPS SEED [discard]

   maps N fresh pages (from a multiple of 8 pages), touches them in order PASSES times over (a loop over N
   pages; PASSES = 1 is a sequential scan), then takes STEPS steps of a random
   walk over them (xorshift64 seeded with SEED; the test replays it). The
   loops make no memory reference but the buffer's, so two runs that differ
   only in PASSES or STEPS differ exactly by those references: every other
   page lies below all N pages in the LRU stack by then. Give the numbers
   with leading zeros to the same width in runs that are compared, so that
   parsing them makes the same references. With `discard`, the N pages are
   given back (madvise MADV_DONTNEED) after the first pass: the later passes
   touch demand-zero pages again. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { PAGE = 4096 };

static uint64_t xorshift(uint64_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

int main(int argc, char** argv) {
  const int discard = argc == 6 && strcmp(argv[5], "discard") == 0;
  if (argc != 5 && !discard) {
    fprintf(stderr, "usage: pages_cases N PASSES STEPS SEED [discard]\n");
    return 2;
  }
  const long n = atol(argv[1]), passes = atol(argv[2]), steps = atol(argv[3]);
  uint64_t seed = strtoull(argv[4], NULL, 10);
  if (n < 1 || passes < 1 || steps < 0 || seed == 0) {
    fprintf(stderr, "pages_cases: N and PASSES must be >= 1, STEPS >= 0, SEED != 0\n");
    return 2;
  }
  /* The N pages start at a multiple of 8 pages: swap prefetching reads aligned groups of 8. */
  unsigned char* mapped = mmap(NULL, (size_t)(n + 7) * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    perror("pages_cases: mmap");
    return 1;
  }
  void* p = (void*)(((uintptr_t)mapped + 8 * PAGE - 1) & ~(uintptr_t)(8 * PAGE - 1));
  volatile unsigned char* buf = p;
  for (long r = 0; r < passes; r++) {
    for (long i = 0; i < n; i++) buf[i * PAGE] = 1;
    if (discard && r == 0 && madvise(p, (size_t)n * PAGE, MADV_DONTNEED) != 0) {
      perror("pages_cases: madvise");
      return 1;
    }
  }
  for (long i = 0; i < steps; i++) buf[(long)(xorshift(&seed) % (uint64_t)n) * PAGE] = 1;
  return 0;
}
