// invalid free of a never-allocated pointer: a made-up address nothing maps
#include <stdint.h>

#include "misuse.h"

int main(void) {
  hidden_free((void *)(uintptr_t)0x5a5a5a5a5a50ull);
  churn(MISUSE_SMALL, 1);
  return unnoticed("free of a made-up address");
}
