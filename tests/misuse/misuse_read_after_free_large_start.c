// read after free of a large object's first bytes (256 KiB): caught if they fault or no longer hold the secret
#include "misuse.h"

int main(void) {
  char* p = hidden_malloc(MISUSE_LARGE);
  fill(p, MISUSE_LARGE, 0x5a);
  hidden_free(p);
  if (!holds(p, 64, 0x5a)) {
    fprintf(stderr, "read after free: the freed object's first bytes no longer hold the secret\n");
    abort();
  }
  return unnoticed("read after free of a large object's start");
}
