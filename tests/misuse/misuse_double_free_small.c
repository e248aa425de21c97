// double free of a small object: freed twice in a row
#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(MISUSE_SMALL);
  fill(p, MISUSE_SMALL, 0);
  hidden_free(p);
  hidden_free(p);
  churn(MISUSE_SMALL, 2);
  return unnoticed("double free (small)");
}
