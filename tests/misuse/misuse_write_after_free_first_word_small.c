// write after free into the first word of a small object (where a free list keeps its link), found later
#include "misuse.h"

int main(void) {
  char* p = hidden_malloc(MISUSE_SMALL);
  fill(p, MISUSE_SMALL, 0);
  hidden_free(p);
  poke(p, 0, 8);
  churn(MISUSE_SMALL, 16); /* past any quarantine: the slot goes back to its list, is handed out again */
  return unnoticed("write after free into the first word (small)");
}
