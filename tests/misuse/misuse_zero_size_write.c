// zero-size access: 8 bytes written into malloc(0)
#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(0);
  if (p == NULL) return MISUSE_NOT_APPLICABLE;  /* malloc(0) may return NULL: nothing to access */
  poke(p, 0, 8);
  hidden_free(p);
  churn(1, 4);
  return unnoticed("write into a zero-size allocation");
}
