// malloc_usable_size of a bad pointer: one already freed
#include <malloc.h>

#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(MISUSE_SMALL);
  hidden_free(p);
  volatile size_t size = malloc_usable_size(hide(p));
  (void)size;
  return unnoticed("malloc_usable_size of a freed pointer");
}
