// correct: malloc and free of small and large objects, freed in and out of order
#include "misuse.h"

int main(void) {
  enum { N = 512 };
  static char *objects[N];
  static const size_t sizes[] = {1, 8, 24, 32, 100, 1000, 4096, 70000, MISUSE_LARGE, 3 << 20};
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) {
      size_t size = sizes[(size_t)(i + round) % (sizeof sizes / sizeof *sizes)];
      objects[i] = hidden_malloc(size);
      fill(objects[i], size, i & 0x7f);
    }
    for (int i = 0; i < N; i += 2) hidden_free(objects[i]);  /* every other one, then the rest backwards */
    for (int i = N - 1; i > 0; i -= 2) {
      size_t size = sizes[(size_t)(i + round) % (sizeof sizes / sizeof *sizes)];
      expect(holds(objects[i], size, i & 0x7f), "an object changed while live");
      hidden_free(objects[i]);
    }
  }
  free(NULL);
  return 0;
}
