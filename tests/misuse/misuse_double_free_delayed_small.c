// delayed double free of a small object: other frees of its size between the two
#include "misuse.h"

int main(void) {
  enum { OTHERS = 16 };
  char *p = hidden_malloc(MISUSE_SMALL);
  char *others[OTHERS];
  for (int i = 0; i < OTHERS; i++) others[i] = hidden_malloc(MISUSE_SMALL);
  hidden_free(p);
  for (int i = 0; i < OTHERS; i++) hidden_free(others[i]);
  hidden_free(p);
  churn(MISUSE_SMALL, 2);
  return unnoticed("delayed double free (small)");
}
