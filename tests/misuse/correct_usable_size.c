// correct: malloc_usable_size is at least the request, and all of it may be written
#include <malloc.h>

#include "misuse.h"

int main(void) {
  expect(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL) is not 0");
  for (size_t size = 1; size <= 1 << 20; size = size * 2 + 3) {
    char *p = hidden_malloc(size);
    size_t usable = malloc_usable_size(p);
    expect(usable >= size, "usable size below the request");
    fill(p, usable, 0x44);
    hidden_free(p);
  }
  return 0;
}
