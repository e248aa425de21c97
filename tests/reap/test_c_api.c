/* strata/reap.h compiles as C11 (-Wpedantic) and works from C: every call once. */
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
