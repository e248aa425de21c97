// correct: realloc growing and shrinking, in place or moved, and realloc(NULL, n)
#include "misuse.h"

int main(void) {
  char *p = (char *)hide(realloc(NULL, 10));
  expect(p != NULL, "realloc(NULL, 10) failed");
  fill(p, 10, 0x5);
  size_t size = 10;
  for (int step = 0; step < 24; step++) {
    size_t next = step % 3 == 2 ? size / 2 + 1 : size * 3;
    char *q = (char *)hide(realloc(p, next));
    expect(q != NULL, "realloc failed");
    expect(holds(q, next < size ? next : size, 0x5), "realloc lost the contents");
    fill(q, next, 0x5);
    p = q;
    size = next;
  }
  hidden_free(p);
  return 0;
}
