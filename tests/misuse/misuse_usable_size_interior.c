// malloc_usable_size of a bad pointer: into the middle of an object
#include <malloc.h>

#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(128);
  fill(p, 128, 0);
  volatile size_t size = malloc_usable_size(hide(p + 32));
  (void)size;
  hidden_free(p);
  return unnoticed("malloc_usable_size of an interior pointer");
}
