// zero-size access: 1 byte read through malloc(0)'s pointer
#include "misuse.h"

int main(void) {
  char* p = hidden_malloc(0);
  if (p == NULL) return MISUSE_NOT_APPLICABLE; /* malloc(0) may return NULL: nothing to access */
  volatile char c = *(volatile char*)hide(p);
  (void)c;
  hidden_free(p);
  return unnoticed("read from a zero-size allocation");
}
