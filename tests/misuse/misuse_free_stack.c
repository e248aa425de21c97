// invalid free of a never-allocated pointer: into a stack buffer
#include "misuse.h"

int main(void) {
  char buffer[256];
  fill(buffer, sizeof buffer, 0);
  hidden_free(buffer + 64);
  churn(MISUSE_SMALL, 1);
  return unnoticed("free of a stack address");
}
