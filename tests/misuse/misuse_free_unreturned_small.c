// invalid free of an address inside the heap that malloc never returned: one 4 KiB object past a live one
#include "misuse.h"

int main(void) {
  char* p = hidden_malloc(4096);
  fill(p, 4096, 0);
  hidden_free(p + 4096);
  churn(4096, 2);
  return unnoticed("free of an address malloc never returned (small)");
}
