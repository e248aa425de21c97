// free of a pointer into the middle of a large object (256 KiB, freed at +64 KiB)
#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(MISUSE_LARGE);
  fill(p, MISUSE_LARGE, 0);
  hidden_free(p + 64 * 1024);
  churn(MISUSE_LARGE, 1);
  return unnoticed("free of an interior pointer (large)");
}
