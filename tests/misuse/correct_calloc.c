// correct: calloc returns zeroed memory, also for memory freed dirty before
#include "misuse.h"

int main(void) {
  static const size_t counts[] = {1, 3, 16, 100, 5000, 70000};
  for (int round = 0; round < 4; round++) {
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
      char *p = (char *)hide(calloc(counts[i], 8));
      expect(p != NULL, "calloc failed");
      expect(holds(p, counts[i] * 8, 0), "calloc memory is not zero");
      fill(p, counts[i] * 8, 0x7e);
      hidden_free(p);
    }
  }
  return 0;
}
