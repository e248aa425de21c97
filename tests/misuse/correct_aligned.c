// correct: posix_memalign, aligned_alloc and memalign at alignments up to 64 KiB
#include <malloc.h>
#include <stdint.h>

#include "misuse.h"

int main(void) {
  for (size_t align = sizeof(void *); align <= 65536; align *= 2) {
    void *a = NULL;
    expect(posix_memalign(&a, align, 3 * align + 5) == 0, "posix_memalign failed");
    char *b = (char *)hide(aligned_alloc(align, 2 * align));
    char *c = (char *)hide(memalign(align, 100));
    expect(b != NULL && c != NULL, "aligned_alloc or memalign failed");
    expect((uintptr_t)a % align == 0 && (uintptr_t)b % align == 0 && (uintptr_t)c % align == 0, "misaligned");
    fill((char *)a, 3 * align + 5, 1);
    fill(b, 2 * align, 2);
    fill(c, 100, 3);
    hidden_free(c);
    hidden_free(a);
    hidden_free(b);
  }
  return 0;
}
