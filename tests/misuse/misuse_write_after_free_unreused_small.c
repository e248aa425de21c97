// write after free of a small object whose slot is never handed out again (the program ends)
#include "misuse.h"

int main(void) {
  char* p = hidden_malloc(MISUSE_SMALL);
  fill(p, MISUSE_SMALL, 0);
  hidden_free(p);
  poke(p, 0, MISUSE_SMALL);
  return unnoticed("write after free, slot not reused (small)");
}
