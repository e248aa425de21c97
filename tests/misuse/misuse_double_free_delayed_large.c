// delayed double free of a large object: other large frees between the two
#include "misuse.h"

int main(void) {
  enum { OTHERS = 4 };
  char *p = hidden_malloc(MISUSE_LARGE);
  char *others[OTHERS];
  for (int i = 0; i < OTHERS; i++) others[i] = hidden_malloc(MISUSE_LARGE);
  hidden_free(p);
  for (int i = 0; i < OTHERS; i++) hidden_free(others[i]);
  hidden_free(p);
  churn(MISUSE_LARGE, 1);
  return unnoticed("delayed double free (large)");
}
