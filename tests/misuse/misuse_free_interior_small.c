// free of a pointer into the middle of a small object (64 bytes, freed at +32)
#include "misuse.h"

int main(void) {
  char *p = hidden_malloc(64);
  fill(p, 64, 0);
  hidden_free(p + 32);
  churn(64, 2);
  return unnoticed("free of an interior pointer (small)");
}
