// invalid free of a never-allocated pointer: into pages the program mapped itself
#include <sys/mman.h>

#include "misuse.h"

int main(void) {
  char *pages = (char *)mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) return 1;
  hidden_free(pages + 4096 + 64);
  churn(MISUSE_SMALL, 1);
  return unnoticed("free of an address in the program's own mapping");
}
