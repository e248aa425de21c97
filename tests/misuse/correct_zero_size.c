// correct: malloc(0) and calloc(0, n) give freeable pointers, free(NULL) does nothing
#include "misuse.h"

int main(void) {
  char *pointers[64];
  for (int i = 0; i < 64; i++) pointers[i] = (char *)hide(i % 2 ? malloc(0) : calloc(0, 8));
  for (int i = 0; i < 64; i++)
    for (int j = i + 1; j < 64; j++)
      expect(pointers[i] == NULL || pointers[i] != pointers[j], "two live zero-size objects share an address");
  for (int i = 0; i < 64; i++) hidden_free(pointers[i]);
  free(NULL);
  return 0;
}
