// double free of a large object (256 KiB): freed twice in a row
#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(MISUSE_LARGE);
  fill(p, MISUSE_LARGE, 0);
  hidden_free(p);
  hidden_free(p);
  churn(MISUSE_LARGE, 1);
  return unnoticed("double free (large)");
}
