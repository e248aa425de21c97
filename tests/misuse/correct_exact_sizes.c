// correct: every size from 0 to 2 KiB and around page sizes, written to its last requested byte
#include "misuse.h"

static void one(size_t size) {
  char *p = hidden_malloc(size);
  char *q = hidden_malloc(size);
  fill(p, size, 0x11);
  fill(q, size, 0x22);
  expect(holds(p, size, 0x11) && holds(q, size, 0x22), "neighbours overlap");
  hidden_free(p);
  hidden_free(q);
}

int main(void) {
  for (size_t size = 0; size <= 2048; size++) one(size);
  for (size_t page = 4096; page <= MISUSE_LARGE * 4; page *= 2)
    for (size_t size = page - 17; size <= page + 17; size++) one(size);
  return 0;
}
