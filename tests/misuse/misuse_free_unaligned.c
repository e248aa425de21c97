// unaligned free: one byte past the start of a small object
#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(64);
  fill(p, 64, 0);
  hidden_free(p + 1);
  churn(64, 2);
  return unnoticed("unaligned free");
}
