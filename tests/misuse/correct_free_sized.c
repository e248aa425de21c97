// correct: free_sized with the right size where the allocator has it (plain free where it has not)
#define _GNU_SOURCE
#include <dlfcn.h>

#include "misuse.h"

int main(void) {
  void (*free_sized)(void *, size_t) = (void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "free_sized");
  for (size_t size = 1; size <= 1 << 20; size = size * 3 + 1) {
    char *p = hidden_malloc(size);
    fill(p, size, 0x21);
    if (free_sized)
      free_sized(hide(p), size);
    else
      hidden_free(p);
  }
  return 0;
}
