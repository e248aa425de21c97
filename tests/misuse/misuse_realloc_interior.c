// realloc of a bad pointer: into the middle of an object
#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(128);
  fill(p, 128, 0);
  char *q = (char *)hide(realloc(hide(p + 32), 4096));
  if (q) fill(q, 4096, 0x33);
  churn(128, 2);
  return unnoticed("realloc of an interior pointer");
}
