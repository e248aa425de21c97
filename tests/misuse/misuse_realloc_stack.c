// realloc of a bad pointer: a stack address the allocator never returned
#include "misuse.h"

int main(void) {
  char buffer[256];
  fill(buffer, sizeof buffer, 0);
  char *q = (char *)hide(realloc(hide(buffer + 64), 4096));
  if (q) fill(q, 4096, 0x33);
  churn(MISUSE_SMALL, 1);
  return unnoticed("realloc of a stack address");
}
