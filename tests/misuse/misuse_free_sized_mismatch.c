// free_sized mismatch (C23): free_sized(p, wrong size); not applicable where no free_sized exists
#define _GNU_SOURCE
#include <dlfcn.h>

#include "misuse.h"

int main(void) {
  /* glibc 2.36 has no free_sized: look for the allocator's own at run time. */
  void (*free_sized)(void *, size_t) = (void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "free_sized");
  if (free_sized == NULL) {
    fprintf(stderr, "no free_sized in this process\n");
    return MISUSE_NOT_APPLICABLE;
  }
  char *p = hidden_malloc(64);
  fill(p, 64, 0);
  free_sized(hide(p), 1024);
  churn(64, 2);
  return unnoticed("free_sized with the wrong size");
}
