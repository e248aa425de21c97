/* strata/reap.h compiles as C11 (-std=c11 -pedantic) and works from C: every
 * call once, and the inline strata_reap_malloc (it bumps through the reap's
 * public head, strata_reap_head) places consecutive objects side by side. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "strata/reap.h"

static int failures = 0;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

int main(void) {
  strata_reap *root = strata_reap_create(NULL);
  strata_reap *child = strata_reap_create(root);
  CHECK(root != NULL && child != NULL);

  char *s = strata_reap_malloc(root, 32);
  CHECK(s != NULL && (uintptr_t)s % 16 == 0);
  strcpy(s, "hello, reap");
  CHECK(strata_reap_usable_size(root, s) >= 32);

  int *zeros = strata_reap_calloc(child, 100, sizeof(int));
  CHECK(zeros != NULL && zeros[0] == 0 && zeros[99] == 0);
  errno = 0;
  CHECK(strata_reap_calloc(child, SIZE_MAX, 2) == NULL && errno == ENOMEM);

  s = strata_reap_realloc(root, s, 4000);
  CHECK(s != NULL && strcmp(s, "hello, reap") == 0);

  void *a = strata_reap_aligned_alloc(root, 256, 10);
  CHECK(a != NULL && (uintptr_t)a % 256 == 0);
  errno = 0;
  CHECK(strata_reap_aligned_alloc(root, 24, 10) == NULL && errno == EINVAL);

  strata_reap_stats stats;
  strata_reap_get_stats(root, &stats);
  CHECK(stats.objects_live == 2 && stats.bytes_held >= stats.bytes_live && stats.chunks >= 1);

  {
    /* The inline path: a fresh reap bumps objects of mixed sizes one after
     * the other, each in (size + 16) rounded down to 16 bytes. */
    strata_reap *fresh = strata_reap_create(NULL);
    const strata_reap_head *head = (const strata_reap_head *)(const void *)fresh;
    size_t sizes[] = {1, 24, 100, 16, 7, 64, 300};
    char *prev = strata_reap_malloc(fresh, 8);
    size_t prev_size = 8, i;
    CHECK(head->version == STRATA_REAP_HEAD_VERSION);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
      char *p = strata_reap_malloc(fresh, sizes[i]);
      CHECK(p == prev + ((prev_size + 16) & ~(size_t)15));
      CHECK(strata_reap_usable_size(fresh, p) >= sizes[i]);
      memset(p, 0x5a, sizes[i]);
      prev = p;
      prev_size = sizes[i];
    }
    if ((head->flags & STRATA_REAP_SLOW_CHECKED) == 0) CHECK(head->flags == 0 && head->limit > head->bump);
    strata_reap_destroy(fresh);
  }

  strata_reap_free(root, a);
  strata_reap_free(root, NULL);
  strata_reap_clear(root); /* clears the child too */
  strata_reap_get_stats(child, &stats);
  CHECK(stats.objects_live == 0);
  CHECK(strata_reap_malloc(child, 0) != NULL);
  strata_reap_destroy(root); /* and the child with it */
  strata_reap_destroy(NULL);

  if (failures == 0) printf("C API: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
