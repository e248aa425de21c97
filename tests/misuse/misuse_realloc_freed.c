// realloc of a bad pointer: one already freed
#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(MISUSE_SMALL);
  fill(p, MISUSE_SMALL, 0);
  hidden_free(p);
  char *q = (char *)hide(realloc(hide(p), 4096));
  if (q) fill(q, 4096, 0x33);
  churn(MISUSE_SMALL, 2);
  return unnoticed("realloc of a freed pointer");
}
