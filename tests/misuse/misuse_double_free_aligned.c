// double free of an aligned object (posix_memalign, 64-byte alignment)
#include "misuse.h"

int main(void) {
  void *p = NULL;
  if (posix_memalign(&p, 64, 200) != 0) return 1;
  fill((char *)p, 200, 0);
  hidden_free(p);
  hidden_free(p);
  churn(200, 2);
  return unnoticed("double free (aligned)");
}
