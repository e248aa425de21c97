// double free through realloc: the old pointer freed after realloc moved the block
#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(MISUSE_SMALL);
  fill(p, MISUSE_SMALL, 0);
  char *fence = hidden_malloc(MISUSE_SMALL);  /* a neighbour, so that p cannot grow in place */
  char *old = (char *)hide(p);  /* the same address, out of the compiler's sight */
  char *q = (char *)hide(realloc(p, 64 * 1024));  /* far bigger: moves */
  if (q == old) return MISUSE_NOT_APPLICABLE;      /* grown in place: nothing was freed */
  hidden_free(old);
  hidden_free(q);
  hidden_free(fence);
  churn(MISUSE_SMALL, 2);
  return unnoticed("free of the pointer realloc replaced");
}
