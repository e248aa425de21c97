// invalid free of a never-allocated pointer: into a global array
#include "misuse.h"

static char global_buffer[4096];

int main(void) {
  fill(global_buffer, sizeof global_buffer, 0);
  hidden_free(global_buffer + 64);
  churn(MISUSE_SMALL, 1);
  return unnoticed("free of a global address");
}
